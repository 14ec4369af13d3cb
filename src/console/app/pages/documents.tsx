// Documents: create from a URL or an uploaded file (picked or dropped, with the upload's progress), watch ingestion (the status refreshes by itself while pending or
// processing), read the chunks, re-ingest, delete; and search across every document.
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, get, listAll, upload, type Chunk, type DocumentRecord, type SearchHit } from '../api.js';
import { DeleteButton } from '../delete-button.js';
import { useForm } from '../form.js';
import { PagedView, Table, type Column } from '../lists.js';
import { snippetParts } from '../snippet.js';
import {
  describeError,
  Empty,
  ErrorNotice,
  fieldMessages,
  href,
  Loading,
  navigate,
  PageTitle,
  Select,
  StatusBadge,
  TextField,
  Time,
  usePagedList,
} from '../ui.js';

const DOCUMENT_TYPES: [string, string][] = [
  ['URL', 'URL (a web page)'],
  ['TXT', 'TXT (plain text)'],
  ['PDF', 'PDF'],
  ['CSV', 'CSV'],
  ['VIDEO', 'VIDEO (subtitles: WebVTT or SRT)'],
];
const busy = (document: DocumentRecord) => document.status === 'pending' || document.status === 'processing';

/** How long one request waits for ingestion to end; progress shows at least this often. */
const WAIT_SECONDS = 5;
/** The least time between two requests for one document. */
const MIN_INTERVAL_MS = 1000;

/**
 * Follows a document while it is pending or processing: each request waits (`?wait=`) until
 * ingestion ends or WAIT_SECONDS pass, so the change shows at once without polling in a tight loop.
 */
function useFollow(documents: DocumentRecord[] | undefined, onUpdate: (document: DocumentRecord) => void) {
  const latest = useRef(onUpdate);
  latest.current = onUpdate;
  const ids = (documents ?? []).filter(busy).map((document) => document.id);
  const key = ids.join(',');
  useEffect(() => {
    if (ids.length === 0) return;
    const controller = new AbortController();
    for (const id of ids) {
      void (async () => {
        for (;;) {
          const started = Date.now();
          let document: DocumentRecord;
          try {
            document = await get<DocumentRecord>(`/documents/${encodeURIComponent(id)}?wait=${WAIT_SECONDS}`, controller.signal);
          } catch {
            return; // aborted (the page changed) or the document is gone: the next load shows why
          }
          latest.current(document);
          if (!busy(document)) return;
          const pause = MIN_INTERVAL_MS - (Date.now() - started);
          if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
          if (controller.signal.aborted) return;
        }
      })();
    }
    return () => controller.abort();
  }, [key]);
}

/** The status, and while processing how far it got. */
function StatusText({ document }: { document: DocumentRecord }) {
  const progress = document.status === 'processing' ? document.progress : undefined;
  return (
    <>
      <StatusBadge status={document.status} />
      {progress && (
        <span class="muted">
          {' '}
          {progress.phase}
          {progress.chunksTotal ? ` ${progress.chunksStored ?? 0}/${progress.chunksTotal} chunks` : ''}
        </span>
      )}
      {document.status === 'failed' && document.error && <span class="error-text"> {document.error}</span>}
    </>
  );
}

const DOCUMENT_COLUMNS: Column<DocumentRecord>[] = [
  { label: 'Name', cell: (document) => <a href={href(`/documents/${document.id}`)}>{document.name}</a> },
  { label: 'Type', cell: (document) => document.type },
  { label: 'Status', cell: (document) => <StatusText document={document} />, live: true },
  { label: 'Chunks', cell: (document) => document.index?.chunks ?? '—' },
  { label: 'Created', cell: (document) => <Time value={document.createdAt} /> },
];

/** The file a drop on the page brought, to start a new document from. */
function fileOf(event: DragEvent): File | undefined {
  return event.dataTransfer?.files?.[0];
}

export function DocumentsPage() {
  const [error, setError] = useState<string>();
  const [showForm, setShowForm] = useState(false);
  const [dropped, setDropped] = useState<File>();
  const documents = usePagedList<DocumentRecord>('/documents', 50, setError);
  useFollow(documents.items, (fresh) =>
    documents.setItems((shown) => shown?.map((document) => (document.id === fresh.id ? fresh : document))),
  );

  // A file dropped anywhere on the page opens the form with it.
  const onDrop = (event: DragEvent) => {
    const file = fileOf(event);
    if (!file) return;
    event.preventDefault();
    setDropped(file);
    setShowForm(true);
  };
  return (
    <section onDragOver={(event) => event.preventDefault()} onDrop={onDrop}>
      <div class="title-row">
        <PageTitle>Documents</PageTitle>
        <button type="button" class="primary" aria-expanded={showForm} onClick={() => setShowForm(!showForm)}>
          New document
        </button>
      </div>
      <p>
        Documents are uploaded as files or fetched from a URL, split into chunks and searched when a linked agent answers. Drop a file on
        this page to upload it. <a href={href('/search')}>Search your documents</a>.
      </p>
      {showForm && (
        <DocumentForm
          key={dropped ? `${dropped.name}:${dropped.size}:${dropped.lastModified}` : 'new'}
          dropped={dropped}
          onCreated={async () => {
            setShowForm(false);
            setDropped(undefined);
            await documents.load();
          }}
        />
      )}
      <PagedView
        list={documents}
        error={error}
        more="Show more documents"
        empty={
          <>
            No documents yet. Drop a file here, or choose <strong>New document</strong> to upload a text, Markdown, PDF, CSV, HTML or
            caption file, or give the URL of one.
          </>
        }
      >
        {(items) => <Table rows={items} columns={DOCUMENT_COLUMNS} rowData={(document) => ({ 'data-document-id': document.id })} />}
      </PagedView>
    </section>
  );
}

const DOCUMENT_FIELDS = ['name', 'type', 'url', 'file', 'from_page', 'to_page', 'splitter', 'authorization', 'metadata'];

/** What a file input offers: the kinds the service reads. */
const ACCEPTED_FILES = '.txt,.text,.md,.markdown,.csv,.tsv,.html,.htm,.pdf,.vtt,.srt,text/*,application/pdf';

const formatBytes = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Where a file is picked or dropped. */
function DropZone({ file, onFile, errors }: { file?: File; onFile: (file: File) => void; errors: string[] }) {
  const [over, setOver] = useState(false);
  return (
    <div class="field" data-field="file">
      <label
        class={over ? 'drop-zone over' : 'drop-zone'}
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(event) => {
          const dropped = fileOf(event);
          event.preventDefault();
          event.stopPropagation();
          setOver(false);
          if (dropped) onFile(dropped);
        }}
      >
        <span>{file ? `${file.name} (${formatBytes(file.size)})` : 'Drop a file here, or choose one'}</span>
        <input
          type="file"
          name="file"
          accept={ACCEPTED_FILES}
          aria-invalid={errors.length > 0}
          onChange={(event) => {
            const picked = event.currentTarget.files?.[0];
            if (picked) onFile(picked);
          }}
        />
      </label>
      {errors.map((message) => (
        <p key={message} class="error-text">
          {message}
        </p>
      ))}
    </div>
  );
}

function DocumentForm({ onCreated, dropped }: { onCreated: () => void; dropped?: File }) {
  const [file, setFile] = useState<File | undefined>(dropped);
  /** Bytes of the upload sent so far, and of the whole (0: not known). */
  const [progress, setProgress] = useState<{ sent: number; total: number }>();
  const form = useForm(
    {
      source: dropped ? 'file' : 'url',
      name: '',
      type: dropped ? '' : 'URL',
      url: '',
      from_page: '',
      to_page: '',
      splitter: 'character',
      chunk_size: '',
      chunk_overlap: '',
      auth: 'none',
      bearer: '',
      username: '',
      password: '',
    },
    DOCUMENT_FIELDS,
  );
  const { values, set, errors } = form;
  const number = (text: string) => (text.trim() === '' ? undefined : Number(text));

  const submit = form.submit(async () => {
    const splitter =
      values.chunk_size || values.chunk_overlap || values.splitter !== 'character'
        ? { type: values.splitter, chunk_size: number(values.chunk_size), chunk_overlap: number(values.chunk_overlap) }
        : null;
    const authorization =
      values.auth === 'bearer'
        ? { bearer: values.bearer }
        : values.auth === 'basic'
          ? { username: values.username, password: values.password }
          : null;
    if (values.source === 'file') {
      const data = new FormData();
      if (values.name.trim()) data.append('name', values.name);
      if (values.type) data.append('type', values.type);
      if (values.from_page.trim()) data.append('from_page', values.from_page);
      if (values.to_page.trim()) data.append('to_page', values.to_page);
      if (splitter) data.append('splitter', JSON.stringify(splitter));
      if (file) data.append('file', file);
      setProgress({ sent: 0, total: file?.size ?? 0 });
      try {
        await upload('/documents', data, (sent, total) => setProgress({ sent, total }));
      } finally {
        setProgress(undefined);
      }
      onCreated();
      return;
    }
    await call('POST', '/documents', {
      name: values.name,
      type: values.type,
      url: values.url,
      from_page: number(values.from_page),
      to_page: number(values.to_page) ?? null,
      splitter,
      authorization,
    });
    onCreated();
  });

  return (
    <form class="card form" onSubmit={submit} noValidate aria-label="New document">
      <h2>New document</h2>
      <ErrorNotice error={errors.message} />
      <Select
        label="Source"
        name="source"
        value={values.source}
        // A file's type is detected unless chosen; a URL's must be given (a web page by default).
        onChange={(source) => form.setValues({ ...values, source, type: source === 'file' ? '' : values.type || 'URL' })}
        options={[
          ['url', 'A URL the service fetches'],
          ['file', 'A file from this computer'],
        ]}
      />
      {values.source === 'file' && <DropZone file={file} onFile={setFile} errors={fieldMessages(errors, 'file')} />}
      <TextField
        label="Name"
        name="name"
        {...form.field('name')}
        required={values.source === 'url'}
        hint={values.source === 'file' ? "Empty: the file's name." : undefined}
      />
      <Select
        label="Type"
        name="type"
        value={values.type}
        onChange={set('type')}
        options={values.source === 'file' ? [['', 'Detect from the file'], ...DOCUMENT_TYPES] : DOCUMENT_TYPES}
        errors={errors}
      />
      {values.source === 'url' && (
        <TextField label="URL" name="url" type="url" {...form.field('url')} required hint="An http(s) address the service can reach." />
      )}
      {(values.type === 'PDF' || (values.source === 'file' && values.type === '' && file?.name.toLowerCase().endsWith('.pdf'))) && (
        <div class="row">
          <TextField label="First page" name="from_page" type="number" min="1" {...form.field('from_page')} />
          <TextField label="Last page" name="to_page" type="number" min="1" {...form.field('to_page')} />
        </div>
      )}
      <fieldset data-field="splitter">
        <legend>Splitting into chunks</legend>
        <div class="row">
          <Select
            label="Splitter"
            name="splitter.type"
            value={values.splitter}
            onChange={set('splitter')}
            options={[
              ['character', 'Character (on blank lines)'],
              ['recursive', 'Recursive (paragraphs, lines, words)'],
            ]}
            errors={errors}
          />
          <TextField label="Chunk size" name="splitter.chunk_size" type="number" {...form.field('chunk_size')} placeholder="1000" />
          <TextField label="Overlap" name="splitter.chunk_overlap" type="number" {...form.field('chunk_overlap')} placeholder="200" />
        </div>
      </fieldset>
      {values.source === 'url' && (
        <fieldset data-field="authorization">
          <legend>Credentials</legend>
          <Select
            label="Sent with the request"
            name="authorization"
            value={values.auth}
            onChange={set('auth')}
            options={[
              ['none', 'None'],
              ['bearer', 'Bearer token'],
              ['basic', 'User name and password'],
            ]}
            errors={errors}
            hint="Stored sealed, never shown again, and sent only to this URL's origin."
          />
          {values.auth === 'bearer' && (
            <TextField
              label="Token"
              name="authorization.bearer"
              type="password"
              autoComplete="off"
              value={values.bearer}
              onInput={set('bearer')}
            />
          )}
          {values.auth === 'basic' && (
            <div class="row">
              <TextField
                label="User name"
                name="authorization.username"
                autoComplete="off"
                value={values.username}
                onInput={set('username')}
              />
              <TextField
                label="Password"
                name="authorization.password"
                type="password"
                autoComplete="off"
                value={values.password}
                onInput={set('password')}
              />
            </div>
          )}
        </fieldset>
      )}
      {progress && (
        <p class="upload-progress" aria-live="polite">
          <progress value={progress.sent} max={progress.total || undefined} aria-label="Upload progress" />{' '}
          {progress.total ? `Uploading… ${Math.floor((100 * progress.sent) / progress.total)}%` : 'Uploading…'}
        </p>
      )}
      <button type="submit" class="primary" disabled={form.busy}>
        {values.source === 'file' ? 'Upload and ingest' : 'Create and ingest'}
      </button>
    </form>
  );
}

export function DocumentPage({ id }: { id: string }) {
  const [document, setDocument] = useState<DocumentRecord>();
  const [error, setError] = useState<string>();
  // Read once the document is ready (a busy one's chunks are still changing).
  const chunks = usePagedList<Chunk>(`/documents/${encodeURIComponent(id)}/chunks`, 20, setError, { auto: false });
  const load = async () => {
    try {
      const loaded = await get<DocumentRecord>(`/documents/${encodeURIComponent(id)}`);
      setDocument(loaded);
      if (!busy(loaded)) await chunks.load();
    } catch (failure) {
      setError(describeError(failure));
    }
  };
  useEffect(() => void load(), [id]);
  useFollow(document ? [document] : undefined, (fresh) => {
    setDocument(fresh);
    if (!busy(fresh)) void chunks.load();
  });

  async function reingest() {
    try {
      setDocument(await call<DocumentRecord>('POST', `/documents/${encodeURIComponent(id)}/ingest`));
      chunks.setItems(undefined);
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  if (!document) return error ? <ErrorNotice error={error} /> : <Loading />;
  return (
    <section>
      <p class="crumbs">
        <a href={href('/documents')}>Documents</a>
      </p>
      <PageTitle>{document.name}</PageTitle>
      <ErrorNotice error={error} />
      <p class="actions">
        <button type="button" onClick={reingest} disabled={busy(document)}>
          Ingest again
        </button>
        <a class="button" href={href(`/search?document=${encodeURIComponent(id)}`)}>
          Search in it
        </a>
        <DeleteButton
          path={`/documents/${encodeURIComponent(id)}`}
          question={`Delete “${document.name}” and its chunks?`}
          then={() => navigate('/documents')}
          onError={setError}
        />
      </p>
      <dl class="facts">
        <dt>Status</dt>
        <dd aria-live="polite" data-testid="document-status">
          <StatusText document={document} />
          {busy(document) && <span class="muted"> (updates by itself)</span>}
        </dd>
        <dt>Type</dt>
        <dd>{document.type}</dd>
        <dt>URL</dt>
        <dd class="break">{document.url}</dd>
        {document.type === 'PDF' && (
          <>
            <dt>Pages</dt>
            <dd>
              {document.from_page} to {document.to_page ?? 'the end'}
            </dd>
          </>
        )}
        <dt>Splitter</dt>
        <dd>
          {document.splitter
            ? `${document.splitter.type}, ${document.splitter.chunk_size} characters, ${document.splitter.chunk_overlap} overlap`
            : 'default (character)'}
        </dd>
        <dt>Chunks</dt>
        <dd>{document.index?.chunks ?? '—'}</dd>
        <dt>Ingested</dt>
        <dd>
          <Time value={document.index?.ingestedAt} />
        </dd>
      </dl>
      <h2>Chunks</h2>
      {busy(document) ? (
        <p class="muted">The chunks appear once ingestion has finished.</p>
      ) : (
        <PagedView
          list={chunks}
          more="Show more chunks"
          empty={
            <>
              No chunks:{' '}
              {document.status === 'failed'
                ? 'ingestion failed (see the error above); fix the document and ingest it again.'
                : 'the document held no text.'}
            </>
          }
        >
          {(items) => (
            <ol class="chunks">
              {items.map((chunk) => (
                <li key={chunk.id} value={chunk.position + 1}>
                  <p class="text">{chunk.content}</p>
                </li>
              ))}
            </ol>
          )}
        </PagedView>
      )}
    </section>
  );
}

export function SearchPage({ initial, documentId }: { initial: string; documentId?: string }) {
  const [hits, setHits] = useState<SearchHit[]>();
  const [names, setNames] = useState<Map<string, string>>(new Map());
  const form = useForm({ q: initial }, ['q']);
  const query = form.values.q;

  const search = form.submit(async () => {
    if (!query.trim()) return;
    const params = new URLSearchParams({ q: query });
    if (documentId) params.set('documentId', documentId);
    const [found, documents] = await Promise.all([
      get<SearchHit[]>(`/documents/search?${params}`),
      names.size ? undefined : listAll<DocumentRecord>('/documents'),
    ]);
    if (documents) setNames(new Map(documents.map((document) => [document.id, document.name])));
    setHits(found);
  });
  useEffect(() => {
    if (initial) void search();
  }, []);

  return (
    <section>
      <PageTitle>Search documents</PageTitle>
      <form class="row search" role="search" onSubmit={search}>
        <TextField
          label="Words to find"
          name="q"
          type="search"
          {...form.field('q')}
          hint={documentId ? 'In one document.' : 'Across every ready document; every word must match.'}
        />
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      <ErrorNotice error={form.errors.fields.length ? undefined : form.errors.message} />
      {hits &&
        (hits.length === 0 ? (
          <Empty>Nothing found. Try fewer or other words; only documents that are ready are searched.</Empty>
        ) : (
          <ol class="hits" aria-label="Results">
            {hits.map((hit) => (
              <li key={hit.chunkId}>
                <a href={href(`/documents/${hit.documentId}`)}>{names.get(hit.documentId) ?? 'Document'}</a>{' '}
                <span class="muted">(chunk {hit.position + 1})</span>
                <p class="snippet">
                  {snippetParts(hit.snippet).map((part, index) => (part.marked ? <mark key={index}>{part.text}</mark> : part.text))}
                </p>
              </li>
            ))}
          </ol>
        ))}
    </section>
  );
}
