// Small building blocks every page uses: the hash router, a list read page by page, form fields that show the API's
// validation errors next to the field they concern, notices, empty states and time formatting.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState, type Dispatch, type StateUpdater } from 'preact/hooks';
import { ApiError, list, type FieldIssue } from './api.js';

// ---- Routing: the part after `#`, e.g. #/agents/abc/chat --------------------------------------

function currentPath(): string {
  return location.hash.replace(/^#/, '') || '/';
}

/** The current route path (without its query) and query, updated on every hash change. */
export function useRoute(): { path: string; parts: string[]; query: URLSearchParams } {
  const [hash, setHash] = useState(currentPath);
  useEffect(() => {
    const update = () => setHash(currentPath());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  const [path, search = ''] = hash.split('?');
  return { path, parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) };
}

export function navigate(path: string): void {
  location.hash = path;
}

/** An href for a route. */
export const href = (path: string) => `#${path}`;

// ---- Errors ---------------------------------------------------------------------------------------

/** Field errors by path, from a 422; the rest of the failure stays in `message`. */
export interface FormErrors {
  message?: string;
  fields: FieldIssue[];
}

export const noErrors: FormErrors = { fields: [] };

/** What a form shows for a failure: field issues at their fields, anything else as a message. */
export function formErrors(error: unknown, knownFields: string[]): FormErrors {
  if (!(error instanceof ApiError)) return { message: describeError(error), fields: [] };
  const fields = error.details.filter((issue) => knownFields.some((field) => belongsTo(issue.path, field)));
  const others = error.details.filter((issue) => !fields.includes(issue));
  const message =
    others.length > 0
      ? others.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ')
      : fields.length > 0
        ? 'Please correct the fields marked below.'
        : describeError(error);
  return { message, fields };
}

const belongsTo = (path: string, field: string) => path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);

/** The messages that concern `field` (its own path or one inside it). */
export function fieldMessages(errors: FormErrors, field: string): string[] {
  return errors.fields
    .filter((issue) => belongsTo(issue.path, field))
    .map((issue) => (issue.path === field ? issue.message : `${issue.path.slice(field.length + 1)}: ${issue.message}`));
}

/** A failure in words a user can act on. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 429)
      return `Too many requests right now${error.retryAfter ? `; try again in ${error.retryAfter} s` : ''}. ${error.message}`;
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

// ---- Paged lists -----------------------------------------------------------------------------------

export interface PagedList<T> {
  /** The records shown so far, page after page; undefined until the first page arrives. */
  items: T[] | undefined;
  /** Replaces shown records (one that changed, say) without reading the list again. */
  setItems: Dispatch<StateUpdater<T[] | undefined>>;
  /** The `after` of the next page; undefined on the last page. */
  next: string | undefined;
  /** Reads the first page again (after a change); with `after`, adds the page after it to the shown records. */
  load(after?: string): Promise<void>;
}

/**
 * A list of the API read `limit` records at a time: the first page whenever `path` changes (unless
 * `auto` is false: the page calls `load` itself), the next one on `load(next)`. A failure goes to
 * `onError`, described, so that the page shows it where it shows its other errors.
 */
export function usePagedList<T>(path: string, limit: number, onError: (message: string) => void, { auto = true } = {}): PagedList<T> {
  const [items, setItems] = useState<T[]>();
  const [next, setNext] = useState<string>();
  // The path shown now: a page of an earlier path that arrives late is dropped.
  const shownPath = useRef(path);
  shownPath.current = path;

  const load = async (after?: string) => {
    try {
      const page = await list<T>(path, limit, after);
      if (shownPath.current !== path) return;
      setItems((shown) => (after ? [...(shown ?? []), ...page.items] : page.items));
      setNext(page.next);
    } catch (failure) {
      onError(describeError(failure));
    }
  };
  useEffect(() => {
    if (auto) void load();
  }, [path]);
  return { items, setItems, next, load };
}

// ---- Fields ----------------------------------------------------------------------------------------

interface FieldProps {
  label: string;
  name: string;
  errors?: FormErrors;
  hint?: ComponentChildren;
  children: (props: { id: string; 'aria-invalid'?: boolean; 'aria-describedby'?: string }) => ComponentChildren;
}

/** A label, the control, a hint and the field's errors, wired up for screen readers. */
export function Field({ label, name, errors = noErrors, hint, children }: FieldProps) {
  const id = useId();
  const messages = fieldMessages(errors, name);
  const describedBy = [hint ? `${id}-hint` : '', messages.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${messages.length ? ' invalid' : ''}`} data-field={name}>
      <label for={id}>{label}</label>
      {children({ id, 'aria-invalid': messages.length > 0 || undefined, 'aria-describedby': describedBy })}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <FieldError messages={messages} id={`${id}-error`} />
    </div>
  );
}

/** A field's messages, said at once to screen readers; nothing when there are none. */
export function FieldError({ messages, id }: { messages: string[]; id?: string }) {
  if (messages.length === 0) return null;
  return (
    <p class="field-error" id={id} role="alert">
      {messages.join('; ')}
    </p>
  );
}

/** The input attributes the console's fields use. */
interface InputProps {
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'search';
  required?: boolean;
  autoComplete?: string;
  placeholder?: string;
  min?: string;
  readOnly?: boolean;
}

/** What a field of text takes: its label and body field name, the value with its handler, the form's errors and a hint. */
interface TextProps {
  label: string;
  name: string;
  value: string;
  onInput: (value: string) => void;
  errors?: FormErrors;
  hint?: ComponentChildren;
}

export function TextField(props: TextProps & InputProps) {
  const { label, name, value, onInput, errors, hint, type = 'text', ...rest } = props;
  // Preact's input typings are a union keyed by `type`; every type listed in InputProps takes these attributes.
  const inputType = type as 'text';
  return (
    <Field label={label} name={name} errors={errors} hint={hint}>
      {(aria) => (
        <input {...rest} {...aria} type={inputType} name={name} value={value} onInput={(event) => onInput(event.currentTarget.value)} />
      )}
    </Field>
  );
}

export function TextArea(props: TextProps & { rows?: number; required?: boolean }) {
  const { label, name, value, onInput, errors, hint, rows = 4, required } = props;
  return (
    <Field label={label} name={name} errors={errors} hint={hint}>
      {(aria) => (
        <textarea
          {...aria}
          name={name}
          rows={rows}
          required={required}
          value={value}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

export function Select(props: {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  options: (string | [string, string])[];
  errors?: FormErrors;
  hint?: ComponentChildren;
}) {
  const { label, name, value, onChange, options, errors, hint } = props;
  return (
    <Field label={label} name={name} errors={errors} hint={hint}>
      {(aria) => (
        <select {...aria} name={name} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
          {options.map((option) => {
            const [optionValue, text] = typeof option === 'string' ? [option, option] : option;
            return (
              <option key={optionValue} value={optionValue}>
                {text}
              </option>
            );
          })}
        </select>
      )}
    </Field>
  );
}

export function Checkbox(props: {
  label: string;
  name: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  hint?: ComponentChildren;
}) {
  const id = useId();
  return (
    <div class="field checkbox">
      <input
        type="checkbox"
        id={id}
        name={props.name}
        checked={props.checked}
        onChange={(event) => props.onChange(event.currentTarget.checked)}
      />
      <label for={id}>{props.label}</label>
      {props.hint && <p class="hint">{props.hint}</p>}
    </div>
  );
}

// ---- Notices -----------------------------------------------------------------------------------

export function ErrorNotice({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <p class="notice error" role="alert">
      {error}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Loading() {
  return (
    <p class="loading" role="status">
      Loading…
    </p>
  );
}

/** A delete button that asks once more before it acts. */
export function ConfirmButton({ label, question, onConfirm }: { label: string; question: string; onConfirm: () => Promise<void> | void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        class="danger"
        disabled={busy}
        ref={(element) => element?.focus()}
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function TagChip({ name, color }: { name: string; color: string }) {
  return (
    <span class="tag">
      <span class="swatch" style={{ backgroundColor: color }} aria-hidden="true" />
      {name}
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

/** A timestamp as the reader's local date and time (the full value on hover). */
export function Time({ value }: { value: string | null | undefined }) {
  if (!value) return <span class="muted">never</span>;
  const date = new Date(value);
  return (
    <time dateTime={value} title={value}>
      {Number.isNaN(date.getTime()) ? value : date.toLocaleString()}
    </time>
  );
}

/** Sets the document title and moves focus to the page heading on navigation. */
export function PageTitle({ children }: { children: string }) {
  useEffect(() => {
    document.title = `${children} · Agent console`;
  }, [children]);
  return (
    <h1 tabIndex={-1} id="page-title">
      {children}
    </h1>
  );
}

/** A JSON value as readable text. */
export function JsonText({ value }: { value: unknown }) {
  return <pre class="json">{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>;
}
