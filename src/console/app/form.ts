// A form's state: the values typed, the API's errors at the fields that caused them, and whether a
// submission is under way.
import { useState } from 'preact/hooks';
import { formErrors, noErrors, type FormErrors } from './ui.js';

export interface Form<V> {
  values: V;
  /** An input handler that sets one value. */
  set<K extends keyof V>(key: K): (value: V[K]) => void;
  setValues(values: V): void;
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
  return {
    values,
    set: (key) => (value) => setValues((current) => ({ ...current, [key]: value })),
    setValues,
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
