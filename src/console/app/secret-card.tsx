// A secret the service shows once (a new API token, a webhook's signing secret): shown with a copy
// button until the user is done with it.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * `secret` in a read-only field (its `id`, labelled `label`) with Copy and Done buttons; `children`
 * says why to copy it now.
 */
export function SecretCard(props: {
  id: string;
  title: string;
  label: string;
  secret: string;
  onDone: () => void;
  children: ComponentChildren;
}) {
  const { id, title, label, secret, onDone, children } = props;
  // The secret last copied: a new one shown in the same card (a rotation) is not copied yet.
  const [copied, setCopied] = useState<string>();
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(secret);
    } catch {
      // No clipboard (an insecure origin): select the text so the user can copy it.
      (document.getElementById(id) as HTMLInputElement | null)?.select();
    }
  }
  return (
    <div class="card secret" role="status">
      <h2>{title}</h2>
      <p>{children}</p>
      <label for={id}>{label}</label>
      <div class="row">
        <input id={id} readOnly value={secret} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={copy}>
          {copied === secret ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
