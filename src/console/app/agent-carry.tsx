// Carrying an agent from the Agents page: Export downloads the agent's file; Import reads a file
// (ours or a Letta .af), shows what a dry run says it would create and which secrets are needed,
// then imports it on confirmation and opens the new agent.
import { useState } from 'preact/hooks';
import { call, send } from './api.js';
import { describeError, ErrorNotice, navigate } from './ui.js';

/** What POST /agents/import answers. */
interface ImportResult {
  dryRun: boolean;
  source: 'agent-service' | 'letta';
  agentId: string | null;
  creates: {
    agent: string;
    prompt: boolean;
    tags: { existing: string[]; new: string[] };
    tools: string[];
    documents: string[];
    sessions: number;
    messages: number;
  };
  secretsNeeded: { path: string; message: string }[];
  skipped: { path: string; reason: string }[];
}

/** Downloads the agent's export file (`<name>.agent.json`, as the service names it). */
export function ExportButton({ agent }: { agent: { id: string; name: string } }) {
  const [error, setError] = useState<string>();
  async function download() {
    setError(undefined);
    try {
      const response = await send('GET', `/agents/${agent.id}/export`);
      const name = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'agent.agent.json';
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = name;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (caught) {
      setError(describeError(caught));
    }
  }
  return (
    <>
      <button type="button" class="button" onClick={download}>
        Export<span class="visually-hidden"> {agent.name}</span>
      </button>
      <ErrorNotice error={error} />
    </>
  );
}

const listed = (items: string[]) => (items.length > 0 ? items.join(', ') : 'none');

/** A titled list of what the dry run says about places in the file (`path: text`); nothing when empty. */
function PathNotes({ title, label, notes }: { title: string; label: string; notes: { path: string; text: string }[] }) {
  if (notes.length === 0) return null;
  return (
    <>
      <h3>{title}</h3>
      <ul aria-label={label}>
        {notes.map((note) => (
          <li key={note.path}>
            <code>{note.path}</code>: {note.text}
          </li>
        ))}
      </ul>
    </>
  );
}

/** Pick a file, read the dry run's summary, then import. */
export function ImportButton() {
  const [file, setFile] = useState<{ name: string; body: unknown }>();
  const [preview, setPreview] = useState<ImportResult>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function pick(event: Event) {
    const input = event.currentTarget as HTMLInputElement;
    const chosen = input.files?.[0];
    input.value = '';
    if (!chosen) return;
    setError(undefined);
    setPreview(undefined);
    let body: unknown;
    try {
      body = JSON.parse(await chosen.text());
    } catch {
      setError(`${chosen.name} is not a JSON file.`);
      return;
    }
    try {
      setBusy(true);
      setPreview(await call<ImportResult>('POST', '/agents/import?dryRun=true', body));
      setFile({ name: chosen.name, body });
    } catch (caught) {
      setError(describeError(caught));
    } finally {
      setBusy(false);
    }
  }

  async function confirm() {
    if (!file) return;
    try {
      setBusy(true);
      const result = await call<ImportResult>('POST', '/agents/import', file.body);
      setPreview(undefined);
      setFile(undefined);
      if (result.agentId) navigate(`/agents/${result.agentId}`);
    } catch (caught) {
      setError(describeError(caught));
    } finally {
      setBusy(false);
    }
  }

  const cancel = () => {
    setPreview(undefined);
    setFile(undefined);
  };

  return (
    <div class="import-agent">
      <label class="button">
        Import
        <input
          type="file"
          accept=".json,.af,application/json"
          class="visually-hidden"
          onChange={pick}
          disabled={busy}
          aria-label="Import an agent file"
        />
      </label>
      <ErrorNotice error={error} />
      {preview && file && (
        <section class="card" aria-label="Import preview">
          <h2>Import {preview.creates.agent}?</h2>
          <p class="muted">
            From {file.name} ({preview.source === 'letta' ? 'a Letta agent file' : 'an agent export'}). Nothing is created until you import.
          </p>
          <ul>
            <li>Prompt: {preview.creates.prompt ? 'yes' : 'none'}</li>
            <li>
              Tags: {listed(preview.creates.tags.new)} new; {listed(preview.creates.tags.existing)} already yours
            </li>
            <li>Tools: {listed(preview.creates.tools)}</li>
            <li>Documents: {listed(preview.creates.documents)}</li>
            <li>
              Memory: {preview.creates.sessions} sessions, {preview.creates.messages} messages
            </li>
          </ul>
          <PathNotes
            title="Secrets to give again"
            label="Secrets needed"
            notes={preview.secretsNeeded.map((need) => ({ path: need.path, text: need.message }))}
          />
          <PathNotes title="Left out" label="Left out" notes={preview.skipped.map((skip) => ({ path: skip.path, text: skip.reason }))} />
          <p class="actions">
            <button type="button" class="button primary" onClick={confirm} disabled={busy}>
              Import {preview.creates.agent}
            </button>
            <button type="button" class="button" onClick={cancel} disabled={busy}>
              Cancel
            </button>
          </p>
        </section>
      )}
    </div>
  );
}
