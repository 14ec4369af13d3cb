// A form's state: the values typed, the API's errors at the fields that caused them, and whether a
// submission is under way; and the card a record is created or edited in.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Checkbox, ErrorNotice, formErrors, noErrors, TextField, type FormErrors } from './ui.js';

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

/** A write-only API key in a form: typed to set or replace it, or the stored one removed. */
export interface ApiKeyValues {
  apiKey: string;
  removeApiKey: boolean;
}

/** What a request body says of the key: the one typed, null to remove the stored one, nothing to keep it. */
export function apiKeyChange(values: ApiKeyValues): { apiKey?: string | null } {
  if (values.apiKey) return { apiKey: values.apiKey };
  return values.removeApiKey ? { apiKey: null } : {};
}

/**
 * The key's field, named `name` as the API's `details` path spells it; the key is never shown, so
 * with one `stored` the hint says so and a box removes it; `hint` is the hint when none is.
 */
export function ApiKeyFields({
  form,
  name,
  stored,
  hint,
}: {
  form: Pick<Form<ApiKeyValues>, 'values' | 'field' | 'set'>;
  name: string;
  stored: boolean;
  hint: string;
}) {
  return (
    <>
      <TextField
        label="API key"
        name={name}
        type="password"
        autoComplete="off"
        {...form.field('apiKey')}
        hint={stored ? 'A key is stored. It is never shown; type a new one to replace it.' : hint}
      />
      {stored && (
        <Checkbox
          label="Remove the stored API key"
          name="removeApiKey"
          checked={form.values.removeApiKey}
          onChange={form.set('removeApiKey')}
        />
      )}
    </>
  );
}
