// Agents: the paged list, the create/edit form, and one agent with its linked documents and tools.
import { useEffect, useState } from 'preact/hooks';
import {
  call,
  get,
  listAll,
  type Agent,
  type Connection,
  type DocumentRecord,
  type Link,
  type Prompt,
  type Tag,
  type Tool,
} from '../api.js';
import { DeleteButton } from '../delete-button.js';
import { ExportButton, ImportButton } from '../agent-carry.js';
import { ApiKeyFields, apiKeyChange, useForm, type ApiKeyValues } from '../form.js';
import { PagedView } from '../lists.js';
import {
  Checkbox,
  describeError,
  ErrorNotice,
  Field,
  FieldError,
  href,
  Loading,
  navigate,
  PageTitle,
  Select,
  StatusBadge,
  TagChip,
  TextArea,
  TextField,
  usePagedList,
  type FormErrors,
} from '../ui.js';

const AGENT_TYPES: [string, string][] = [
  ['VENDOR_A', 'VENDOR_A (native tool calling)'],
  ['REACT', 'REACT (text ReAct loop, for models without tool calling)'],
];
const PROVIDERS = ['openai', 'ollama', 'openai-compatible', 'echo'];
const PAGE = 20;

export function AgentsPage() {
  const [error, setError] = useState<string>();
  const agents = usePagedList<Agent>('/agents', PAGE, setError);

  return (
    <section>
      <div class="title-row">
        <PageTitle>Agents</PageTitle>
        <a class="button primary" href={href('/agents/new')}>
          New agent
        </a>
        <ImportButton />
      </div>
      <PagedView
        list={agents}
        error={error}
        more="Show more agents"
        empty={
          <>
            <p>You have no agents yet.</p>
            <p>
              <a href={href('/agents/new')}>Create your first agent</a>: give it a name and a model. A <a href={href('/prompts')}>prompt</a>{' '}
              sets its instructions; <a href={href('/documents')}>documents</a> and <a href={href('/tools')}>tools</a> can be linked to it
              afterwards.
            </p>
          </>
        }
      >
        {(items) => (
          <ul class="cards" aria-label="Agents">
            {items.map((agent) => (
              <li key={agent.id} class="card agent-card">
                <h2>
                  <a href={href(`/agents/${agent.id}`)}>{agent.name}</a>
                </h2>
                {agent.description && <p>{agent.description}</p>}
                <p class="muted">
                  {agent.llm.provider} · {agent.llm.model} · {agent.type}
                  {agent.hasMemory ? ' · memory' : ''}
                </p>
                {agent.tags.length > 0 && (
                  <p class="tags" aria-label="Tags">
                    {agent.tags.map((tag) => (
                      <TagChip key={tag.id} name={tag.name} color={tag.color} />
                    ))}
                  </p>
                )}
                <p class="actions">
                  <a class="button" href={href(`/agents/${agent.id}/chat`)}>
                    Chat<span class="visually-hidden"> with {agent.name}</span>
                  </a>
                  <a class="button" href={href(`/agents/${agent.id}/runs`)}>
                    Runs<span class="visually-hidden"> of {agent.name}</span>
                  </a>
                  <ExportButton agent={agent} />
                </p>
              </li>
            ))}
          </ul>
        )}
      </PagedView>
    </section>
  );
}

/**
 * The model of an agent on a connection: picked from the models its server lists (GET
 * /connections/{id}/models); a text field, saying why, when the server cannot be asked.
 */
function ModelPicker(props: { connectionId: string; value: string; onChange: (model: string) => void; errors: FormErrors }) {
  const { connectionId, value, onChange, errors } = props;
  const [models, setModels] = useState<{ ids: string[] } | { error: string }>();
  useEffect(() => {
    let current = true;
    setModels(undefined);
    get<{ models: string[] }>(`/connections/${encodeURIComponent(connectionId)}/models`)
      .then((answer) => current && setModels({ ids: answer.models }))
      .catch((failure) => current && setModels({ error: describeError(failure) }));
    return () => {
      current = false;
    };
  }, [connectionId]);
  if (models && 'ids' in models && models.ids.length > 0) {
    // A model the server no longer lists stays choosable: the agent keeps it until changed.
    const ids = value && !models.ids.includes(value) ? [value, ...models.ids] : models.ids;
    return (
      <Select
        label="Model"
        name="llm.model"
        value={value}
        onChange={onChange}
        options={[['', 'Choose a model'], ...ids.map((model): [string, string] => [model, model])]}
        errors={errors}
      />
    );
  }
  const hint = !models
    ? 'Asking the server for its models…'
    : 'error' in models
      ? `Its models could not be listed: ${models.error}`
      : 'The server lists no models.';
  return <TextField label="Model" name="llm.model" value={value} onInput={onChange} errors={errors} required hint={hint} />;
}

/** The llm of an agent with its own server settings (leaving a connection it was on). */
function llmOfForm(values: AgentFormValues, agent: Agent | undefined): Record<string, unknown> {
  const llm: Record<string, unknown> = { provider: values.provider.trim(), model: values.model.trim() };
  if (agent?.llm.connectionId) llm.connectionId = null;
  if (values.baseUrl.trim()) llm.baseUrl = values.baseUrl.trim();
  else if (agent?.llm.baseUrl) llm.baseUrl = null;
  return { ...llm, ...apiKeyChange(values) };
}

interface AgentFormValues extends ApiKeyValues {
  name: string;
  type: string;
  /** '' : the server is set on the agent itself (provider, base URL, key). */
  connectionId: string;
  provider: string;
  model: string;
  baseUrl: string;
  description: string;
  avatarUrl: string;
  hasMemory: boolean;
  promptId: string;
  tags: string[];
  isListed: boolean;
}

const FORM_FIELDS = ['name', 'type', 'llm', 'description', 'avatarUrl', 'hasMemory', 'promptId', 'tags', 'isListed', 'documentId'];

export function AgentFormPage({ id }: { id?: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [prompts, setPrompts] = useState<Prompt[]>([]);
  const [tags, setTags] = useState<Tag[]>([]);
  const [connections, setConnections] = useState<Connection[]>([]);
  const form = useForm<AgentFormValues>(
    {
      name: '',
      type: 'VENDOR_A',
      connectionId: '',
      provider: 'openai',
      model: '',
      baseUrl: '',
      apiKey: '',
      removeApiKey: false,
      description: '',
      avatarUrl: '',
      hasMemory: true,
      promptId: '',
      tags: [],
      isListed: false,
    },
    FORM_FIELDS,
  );
  const { values, set, errors } = form;
  const [loadError, setLoadError] = useState<string>();

  useEffect(() => {
    (async () => {
      try {
        const [allPrompts, allTags, allConnections, existing] = await Promise.all([
          listAll<Prompt>('/prompts'),
          listAll<Tag>('/tags'),
          listAll<Connection>('/connections'),
          id ? get<Agent>(`/agents/${encodeURIComponent(id)}`) : undefined,
        ]);
        setPrompts(allPrompts);
        setTags(allTags);
        setConnections(allConnections);
        if (existing) {
          setAgent(existing);
          form.setValues({
            name: existing.name,
            type: existing.type,
            connectionId: existing.llm.connectionId ?? '',
            provider: existing.llm.provider,
            model: existing.llm.model,
            baseUrl: existing.llm.baseUrl ?? '',
            apiKey: '',
            removeApiKey: false,
            description: existing.description ?? '',
            avatarUrl: existing.avatarUrl ?? '',
            hasMemory: existing.hasMemory,
            promptId: existing.promptId ?? '',
            tags: existing.tags.map((tag) => tag.id),
            isListed: existing.isListed ?? false,
          });
        }
      } catch (failure) {
        setLoadError(describeError(failure));
      }
    })();
  }, [id]);

  const submit = form.submit(async () => {
    // On a connection the agent keeps only its model: the connection supplies server, key and provider.
    const llm: Record<string, unknown> = values.connectionId
      ? { model: values.model.trim(), connectionId: values.connectionId }
      : llmOfForm(values, agent);
    const body = {
      name: values.name,
      type: values.type,
      llm,
      description: values.description.trim() || null,
      avatarUrl: values.avatarUrl.trim() || null,
      hasMemory: values.hasMemory,
      promptId: values.promptId || null,
      tags: values.tags,
      isListed: values.isListed,
    };
    const saved = id ? await call<Agent>('PATCH', `/agents/${encodeURIComponent(id)}`, body) : await call<Agent>('POST', '/agents', body);
    navigate(`/agents/${saved.id}`);
  });

  if (loadError) return <ErrorNotice error={loadError} />;
  if (id && !agent) return <Loading />;
  // Errors about llm as a whole (its nested fields show at their own inputs).
  const llmErrors = errors.fields.filter((issue) => issue.path === 'llm').map((issue) => issue.message);

  return (
    <section>
      <PageTitle>{id ? `Edit ${agent?.name ?? 'agent'}` : 'New agent'}</PageTitle>
      <form class="card form" onSubmit={submit} noValidate>
        <ErrorNotice error={errors.message} />
        <TextField label="Name" name="name" {...form.field('name')} required />
        <Select label="Type" name="type" value={values.type} onChange={set('type')} options={AGENT_TYPES} errors={errors} />
        <fieldset>
          <legend>Language model</legend>
          <Select
            label="Connection"
            name="llm.connectionId"
            value={values.connectionId}
            onChange={set('connectionId')}
            options={[
              ['', 'None: set the server here'],
              ...connections.map((connection): [string, string] => [connection.id, `${connection.name} (${connection.provider})`]),
            ]}
            errors={errors}
            hint={
              <>
                A <a href={href('/connections')}>connection</a> supplies the model server and its key.
              </>
            }
          />
          {values.connectionId ? (
            <ModelPicker connectionId={values.connectionId} value={values.model} onChange={set('model')} errors={errors} />
          ) : (
            <>
              <Field
                label="Provider"
                name="llm.provider"
                errors={errors}
                hint="openai, ollama, openai-compatible (any OpenAI-compatible server; give its base URL), or echo (built in, no model server: it answers with your message)."
              >
                {(aria) => (
                  <>
                    <input
                      {...aria}
                      name="llm.provider"
                      list="providers"
                      required
                      value={values.provider}
                      onInput={(event) => set('provider')(event.currentTarget.value)}
                    />
                    <datalist id="providers">
                      {PROVIDERS.map((provider) => (
                        <option key={provider} value={provider} />
                      ))}
                    </datalist>
                  </>
                )}
              </Field>
              <TextField label="Model" name="llm.model" {...form.field('model')} required hint="For example gpt-4o-mini or llama3.2." />
              <TextField
                label="Base URL"
                name="llm.baseUrl"
                type="url"
                {...form.field('baseUrl')}
                hint="Optional: the server's OpenAI-compatible address, e.g. http://127.0.0.1:11434/v1."
              />
              <ApiKeyFields
                form={form}
                name="llm.apiKey"
                stored={!!agent?.llm.hasApiKey}
                hint="Optional. Write-only: it is stored sealed and never shown again."
              />
            </>
          )}
          <FieldError messages={llmErrors} />
        </fieldset>
        <TextArea label="Description" name="description" {...form.field('description')} rows={2} />
        <TextField
          label="Avatar URL"
          name="avatarUrl"
          type="url"
          {...form.field('avatarUrl')}
          hint="Optional: an https address of an image."
        />
        <Select
          label="Prompt"
          name="promptId"
          value={values.promptId}
          onChange={set('promptId')}
          options={[['', '(none: a short default instruction)'], ...prompts.map((prompt): [string, string] => [prompt.id, prompt.name])]}
          errors={errors}
          hint={
            <>
              The agent's instructions. <a href={href('/prompts')}>Manage prompts</a>.
            </>
          }
        />
        <fieldset data-field="tags">
          <legend>Tags</legend>
          {tags.length === 0 ? (
            <p class="hint">
              No tags yet. <a href={href('/tags')}>Create tags</a> to group agents.
            </p>
          ) : (
            tags.map((tag) => (
              <Checkbox
                key={tag.id}
                label={tag.name}
                name="tags"
                checked={values.tags.includes(tag.id)}
                onChange={(checked) => set('tags')(checked ? [...values.tags, tag.id] : values.tags.filter((tagId) => tagId !== tag.id))}
              />
            ))
          )}
        </fieldset>
        <Checkbox
          label="Memory: remember earlier turns of a conversation"
          name="hasMemory"
          checked={values.hasMemory}
          onChange={set('hasMemory')}
        />
        <Checkbox
          label="Listed in the public library (name, description, avatar and model only)"
          name="isListed"
          checked={values.isListed}
          onChange={set('isListed')}
        />
        <p class="actions">
          <button type="submit" class="primary" disabled={form.busy}>
            {id ? 'Save agent' : 'Create agent'}
          </button>
          <a class="button" href={href(id ? `/agents/${id}` : '/agents')}>
            Cancel
          </a>
        </p>
      </form>
    </section>
  );
}

export function AgentDetailPage({ id }: { id: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [prompt, setPrompt] = useState<Prompt>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    get<Agent>(`/agents/${encodeURIComponent(id)}`)
      .then(async (loaded) => {
        setAgent(loaded);
        if (loaded.promptId) setPrompt(await get<Prompt>(`/prompts/${encodeURIComponent(loaded.promptId)}`));
      })
      .catch((failure) => setError(describeError(failure)));
  }, [id]);

  if (error) return <ErrorNotice error={error} />;
  if (!agent) return <Loading />;
  return (
    <section>
      <p class="crumbs">
        <a href={href('/agents')}>Agents</a>
      </p>
      <div class="title-row">
        {agent.avatarUrl && /^https:\/\//.test(agent.avatarUrl) && (
          <img class="avatar" src={agent.avatarUrl} alt="" referrerPolicy="no-referrer" />
        )}
        <PageTitle>{agent.name}</PageTitle>
      </div>
      {agent.description && <p>{agent.description}</p>}
      <p class="actions">
        <a class="button primary" href={href(`/agents/${id}/chat`)}>
          Chat
        </a>
        <a class="button" href={href(`/agents/${id}/runs`)}>
          Runs
        </a>
        <a class="button" href={href(`/agents/${id}/edit`)}>
          Edit
        </a>
        <DeleteButton
          path={`/agents/${encodeURIComponent(id)}`}
          question={`Delete the agent “${agent.name}”, its runs and its memory?`}
          then={() => navigate('/agents')}
          onError={setError}
        />
      </p>
      <dl class="facts">
        <dt>Type</dt>
        <dd>{agent.type}</dd>
        <dt>Model</dt>
        <dd>
          {agent.llm.provider} · {agent.llm.model}
          {agent.llm.baseUrl ? ` · ${agent.llm.baseUrl}` : ''}
          {agent.llm.hasApiKey ? ' · API key stored' : ''}
        </dd>
        <dt>Prompt</dt>
        <dd>{prompt ? prompt.name : <span class="muted">none</span>}</dd>
        <dt>Memory</dt>
        <dd>{agent.hasMemory ? 'on' : 'off'}</dd>
        <dt>Listed in the library</dt>
        <dd>{agent.isListed ? 'yes' : 'no'}</dd>
        <dt>Tags</dt>
        <dd>
          {agent.tags.length ? (
            agent.tags.map((tag) => <TagChip key={tag.id} name={tag.name} color={tag.color} />)
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
      </dl>
      <LinkedList<DocumentRecord> agentId={id} kind="documents" />
      <LinkedList<Tool> agentId={id} kind="tools" />
    </section>
  );
}

/** What a link shows of the document or tool it names (a document's ingestion status too). */
function targetOf(link: Link): { id: string; name: string; status?: string } {
  return 'document' in link
    ? { id: link.documentId, name: link.document.name, status: link.document.status }
    : { id: link.toolId, name: link.tool.name };
}

/** The documents or tools linked to an agent, with a picker to link another and a button to unlink. */
function LinkedList<Target extends { id: string; name: string }>({ agentId, kind }: { agentId: string; kind: 'documents' | 'tools' }) {
  const linkPath = kind === 'documents' ? '/agent-documents' : '/agent-tools';
  const field = kind === 'documents' ? 'documentId' : 'toolId';
  const [links, setLinks] = useState<Link[]>();
  const [choices, setChoices] = useState<Target[]>([]);
  const [picked, setPicked] = useState('');
  const [error, setError] = useState<string>();

  const load = async () => {
    try {
      const [linked, all] = await Promise.all([
        listAll<Link>(`${linkPath}?agentId=${encodeURIComponent(agentId)}`),
        listAll<Target>(`/${kind}`),
      ]);
      setLinks(linked);
      setChoices(all);
    } catch (failure) {
      setError(describeError(failure));
    }
  };
  useEffect(() => void load(), [agentId]);

  const linkedIds = new Set(links?.map((link) => targetOf(link).id));
  const unlinked = choices.filter((choice) => !linkedIds.has(choice.id));
  // Only a ready document has text to answer from: pending, processing and failed ones are not offered.
  const available = kind === 'documents' ? unlinked.filter((choice) => (choice as { status?: string }).status === 'ready') : unlinked;
  const notReady = unlinked.length - available.length;
  const title = kind === 'documents' ? 'Documents' : 'Tools';

  async function add(event: Event) {
    event.preventDefault();
    if (!picked) return;
    setError(undefined);
    try {
      await call('POST', linkPath, { agentId, [field]: picked });
      setPicked('');
      await load();
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  async function unlink(link: Link) {
    try {
      await call('DELETE', `${linkPath}/${encodeURIComponent(link.id)}`);
      await load();
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  return (
    <section class="card" aria-labelledby={`linked-${kind}`}>
      <h2 id={`linked-${kind}`}>{title}</h2>
      <ErrorNotice error={error} />
      {!links ? (
        <Loading />
      ) : links.length === 0 ? (
        <p class="muted">
          {kind === 'documents' ? 'No documents linked: the agent answers from its model alone.' : 'No tools linked: the agent only talks.'}
        </p>
      ) : (
        <ul class="linked">
          {links.map((link) => {
            const target = targetOf(link);
            return (
              <li key={link.id}>
                <a href={href(`/${kind}/${target.id}`)}>{target.name}</a>
                {target.status && <StatusBadge status={target.status} />}
                <button type="button" onClick={() => unlink(link)}>
                  Unlink<span class="visually-hidden"> {target.name}</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {choices.length === 0 ? (
        <p class="hint">
          You have no {kind} yet. <a href={href(`/${kind}`)}>Create one</a>.
        </p>
      ) : (
        available.length > 0 && (
          <form class="row" onSubmit={add}>
            <Select
              label={`Link a ${kind === 'documents' ? 'document' : 'tool'}`}
              name={field}
              value={picked}
              onChange={setPicked}
              options={[['', '(choose)'], ...available.map((choice): [string, string] => [choice.id, choice.name])]}
            />
            <button type="submit" disabled={!picked}>
              Link
            </button>
          </form>
        )
      )}
      {notReady > 0 && (
        <p class="hint" data-testid="documents-not-ready">
          {notReady === 1 ? '1 document is' : `${notReady} documents are`} not ready (still being ingested, or failed) and can be linked
          once {notReady === 1 ? 'it is' : 'they are'}. See <a href={href('/documents')}>Documents</a>.
        </p>
      )}
    </section>
  );
}
