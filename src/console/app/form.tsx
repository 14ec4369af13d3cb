// A form's state: the values typed, the API's errors at the fields that caused them, and whether a
// submission is under way; and the card a record is created or edited in.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorNotice, formErrors, noErrors, type FormErrors } from './ui.js';

/** The keys of `V` whose values are text. */
type TextKeys<V> = { [K in keyof V]: V[K] extends string ? K : never }[keyof V];

export interface Form<V> {
  values: V;
  /** An input handler that sets one value. */
  set<K extends keyof V>(key: K): (value: V[K]) => void;
  /** A text value with its handler and the form's errors: the props a TextField or TextArea binds to it with. */
  field(key: TextKeys<V>): { value: string; onInput: (value: string) => void; errors: FormErrors };
  setValues(values: V): void;
  /** The form as new with `values`: no errors left from an earlier submission (another record opened). */
  reset(values: V): void;
  errors: FormErrors;
  /** True while `submit`'s action runs (a button disables itself with it). */
  busy: boolean;
  /**
   * A submit handler that runs `action`; what it throws shows at the `fields` it concerns (their
   * names as the API's `details` paths spell them), the rest as the form's message.
   */
  submit(action: () => Promise<void>): (event?: Event) => Promise<void>;
}

export function useForm<V extends object>(initial: V, fields: string[]): Form<V> {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<FormErrors>(noErrors);
  const [busy, setBusy] = useState(false);
  const set: Form<V>['set'] = (key) => (value) => setValues((current) => ({ ...current, [key]: value }));
  return {
    values,
    set,
    field: (key) => ({ value: values[key] as string, onInput: set(key) as (value: string) => void, errors }),
    setValues,
    reset: (values) => {
      setValues(values);
      setErrors(noErrors);
    },
    errors,
    busy,
    submit: (action) => async (event) => {
      event?.preventDefault();
      setBusy(true);
      setErrors(noErrors);
      try {
        await action();
      } catch (failure) {
        setErrors(formErrors(failure, fields));
      } finally {
        setBusy(false);
      }
    },
  };
}

/**
 * The card a list page creates or edits one record in: `title` as its heading and name, the form's
 * message, the fields (`children`), and the submit button (disabled while `busy`) beside Cancel.
 */
export function EditCard(props: {
  title: string;
  submitLabel: string;
  form: { errors: FormErrors; busy: boolean };
  onSubmit: (event: Event) => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const { title, submitLabel, form, onSubmit, onCancel, children } = props;
  return (
    <form class="card form" onSubmit={onSubmit} noValidate aria-label={title}>
      <h2>{title}</h2>
      <ErrorNotice error={form.errors.message} />
      {children}
      <p class="actions">
        <button type="submit" class="primary" disabled={form.busy}>
          {submitLabel}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
