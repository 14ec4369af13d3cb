// Connections: a model server set up once (its URL, provider and key), which agents then name. The
// operator's servers are listed as built-in connections (read-only); "Test" asks a server now and
// says in words what works or what is wrong.
import { useState } from 'preact/hooks';
import { call, type Connection } from '../api.js';
import { DeleteButton } from '../delete-button.js';
import { ApiKeyFields, apiKeyChange, EditCard, useForm, type ApiKeyValues } from '../form.js';
import { PagedView, Table } from '../lists.js';
import { describeError, PageTitle, Select, TextField, usePagedList } from '../ui.js';

const PROVIDERS: [string, string][] = [
  ['openai-compatible', 'openai-compatible (vLLM, llama.cpp, LM Studio, a gateway…)'],
  ['ollama', 'ollama'],
  ['openai', 'openai'],
];

interface ConnectionFormValues extends ApiKeyValues {
  name: string;
  provider: string;
  baseUrl: string;
}

const BLANK: ConnectionFormValues = { name: '', provider: 'openai-compatible', baseUrl: '', apiKey: '', removeApiKey: false };

export function ConnectionsPage() {
  const [error, setError] = useState<string>();
  const list = usePagedList<Connection>('/connections', 100, setError);
  const [editing, setEditing] = useState<Connection | 'new'>();
  const form = useForm<ConnectionFormValues>(BLANK, ['name', 'provider', 'baseUrl', 'apiKey']);
  const [results, setResults] = useState<Record<string, { ok: boolean; message: string } | 'testing'>>({});

  function open(connection: Connection | 'new') {
    setEditing(connection);
    form.reset(
      connection === 'new'
        ? BLANK
        : { name: connection.name, provider: connection.provider, baseUrl: connection.baseUrl ?? '', apiKey: '', removeApiKey: false },
    );
  }

  const save = form.submit(async () => {
    const { values } = form;
    const body = { name: values.name, provider: values.provider, baseUrl: values.baseUrl.trim(), ...apiKeyChange(values) };
    if (editing && editing !== 'new') await call('PATCH', `/connections/${encodeURIComponent(editing.id)}`, body);
    else await call('POST', '/connections', body);
    setEditing(undefined);
    await list.load();
  });

  async function test(connection: Connection) {
    setResults((shown) => ({ ...shown, [connection.id]: 'testing' }));
    try {
      const result = await call<{ ok: boolean; message: string }>('POST', `/connections/${encodeURIComponent(connection.id)}/test`, {});
      setResults((shown) => ({ ...shown, [connection.id]: result }));
    } catch (failure) {
      setResults((shown) => ({ ...shown, [connection.id]: { ok: false, message: describeError(failure) } }));
    }
  }

  const stored = editing && editing !== 'new' && editing.hasApiKey;
  return (
    <section>
      <div class="title-row">
        <PageTitle>Connections</PageTitle>
        <button type="button" class="primary" onClick={() => open('new')}>
          New connection
        </button>
      </div>
      <p>
        A connection is a model server set up once: agents name it instead of carrying the server's address and key, so a new key or a moved
        server is one change for all of them.
      </p>
      {editing && (
        <EditCard
          title={editing === 'new' ? 'New connection' : `Edit ${editing.name}`}
          submitLabel={editing === 'new' ? 'Create connection' : 'Save'}
          form={form}
          onSubmit={save}
          onCancel={() => setEditing(undefined)}
        >
          <TextField label="Name" name="name" {...form.field('name')} required />
          <Select
            label="Provider"
            name="provider"
            value={form.values.provider}
            onChange={form.set('provider')}
            options={PROVIDERS}
            errors={form.errors}
          />
          <TextField
            label="Base URL"
            name="baseUrl"
            type="url"
            {...form.field('baseUrl')}
            required
            hint="The server's OpenAI-compatible address, e.g. http://10.0.0.5:11434/v1."
          />
          <ApiKeyFields form={form} name="apiKey" stored={!!stored} hint="Optional. Write-only: stored sealed, never shown." />
        </EditCard>
      )}
      <PagedView list={list} error={error} empty="No connections.">
        {(rows) => (
          <Table
            rows={rows}
            rowData={(row) => ({ 'data-connection-id': row.id })}
            columns={[
              {
                label: 'Name',
                cell: (row) => (
                  <>
                    {row.name}
                    {row.builtIn && <div class="muted">Built in: the operator's server, for everyone</div>}
                  </>
                ),
              },
              { label: 'Provider', cell: (row) => row.provider },
              { label: 'Server', cell: (row) => (row.baseUrl ?? "the operator's") + (row.hasApiKey ? ' · key stored' : '') },
              {
                label: 'Test',
                live: true,
                cell: (row) => {
                  const result = results[row.id];
                  if (result === undefined) return null;
                  if (result === 'testing') return 'Testing…';
                  return <span class={result.ok ? 'ok' : 'field-error'}>{result.message}</span>;
                },
              },
              {
                label: 'Actions',
                hideLabel: true,
                cell: (row) => (
                  <div class="actions">
                    <button type="button" onClick={() => test(row)}>
                      Test<span class="visually-hidden"> {row.name}</span>
                    </button>
                    {!row.builtIn && (
                      <>
                        <button type="button" onClick={() => open(row)}>
                          Edit<span class="visually-hidden"> {row.name}</span>
                        </button>
                        <DeleteButton
                          path={`/connections/${encodeURIComponent(row.id)}`}
                          question={`Delete “${row.name}”?`}
                          then={() => list.load()}
                          onError={setError}
                        />
                      </>
                    )}
                  </div>
                ),
              },
            ]}
          />
        )}
      </PagedView>
    </section>
  );
}
