// Tools, prompts and tags: one list-and-form page each, built from a description of the resource.
// The API's validation errors appear next to the field their `details` path names.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ToolType } from '../../../tools/kinds/index.js';
import { ApiError, call, type Prompt, type Tag, type Tool } from '../api.js';
import { DeleteButton } from '../delete-button.js';
import { EditCard, useForm } from '../form.js';
import { PagedView } from '../lists.js';
import {
  describeError,
  ErrorNotice,
  FieldError,
  Loading,
  PageTitle,
  Select,
  TagChip,
  TextArea,
  TextField,
  usePagedList,
  type FormErrors,
} from '../ui.js';

type Values = Record<string, string>;

/** What a field of its own (`render`) is given: the form's values, a setter, the record edited (none: a new one). */
interface FieldContext<T> {
  values: Values;
  set: (name: string) => (value: string) => void;
  record?: T;
  errors: FormErrors;
}

interface FieldSpec<T = never> {
  /** The body field (and `details` path) it edits. */
  name: string;
  label: string;
  kind?: 'text' | 'textarea' | 'select' | 'color';
  options?: [string, string][];
  /** A hint, or one that depends on the record edited. */
  hint?: ComponentChildren | ((record?: T) => ComponentChildren);
  required?: boolean;
  /** Shown only when this holds (a field of one tool type). */
  when?: (values: Values) => boolean;
  /** A field drawn by the spec itself. */
  render?: (context: FieldContext<T>) => ComponentChildren;
}

interface ResourceSpec<T extends { id: string; name: string }> {
  path: string;
  title: string;
  singular: string;
  empty: ComponentChildren;
  fields: FieldSpec<T>[];
  blank: Values;
  valuesOf: (record: T) => Values;
  /** The request body; `editing` tells a PATCH (send only what changed meaningfully) from a POST. */
  bodyOf: (values: Values, editing: boolean) => Record<string, unknown> | string;
  summary: (record: T) => ComponentChildren;
}

/**
 * The API's messages name fields as the API spells them ("input_variables does not list it"); shown
 * under a field labelled otherwise, they name the field by its label ("the Variables field …").
 * Only names no sentence uses as a word (with an underscore) are replaced.
 */
function inLabels<T>(errors: FormErrors, fields: FieldSpec<T>[]): FormErrors {
  const renamed = fields.filter((field) => field.name.includes('_'));
  const reworded = (message: string) => renamed.reduce((text, field) => text.replaceAll(field.name, `the ${field.label} field`), message);
  return { ...errors, fields: errors.fields.map((issue) => ({ ...issue, message: reworded(issue.message) })) };
}

function ResourcePage<T extends { id: string; name: string }>({ spec }: { spec: ResourceSpec<T> }) {
  const [error, setError] = useState<string>();
  const list = usePagedList<T>(spec.path, 100, setError);
  const [editing, setEditing] = useState<T | 'new'>();
  const form = useForm<Values>(
    spec.blank,
    spec.fields.map((field) => field.name),
  );
  const { values, set } = form;
  const errors = inLabels(form.errors, spec.fields);

  function open(record: T | 'new') {
    setEditing(record);
    form.reset(record === 'new' ? spec.blank : spec.valuesOf(record));
  }

  const submit = form.submit(async () => {
    const isEdit = editing !== undefined && editing !== 'new';
    const body = spec.bodyOf(values, isEdit);
    if (typeof body === 'string') {
      // A mistake the console catches itself (JSON that does not parse), shown as the API's would be.
      const [path, message] = body.split('\u0000');
      throw new ApiError(422, 'validation_failed', message, [{ path, message }]);
    }
    if (isEdit) await call('PATCH', `${spec.path}/${encodeURIComponent((editing as T).id)}`, body);
    else await call('POST', spec.path, body);
    setEditing(undefined);
    await list.load();
  });

  return (
    <section>
      <div class="title-row">
        <PageTitle>{spec.title}</PageTitle>
        <button type="button" class="primary" onClick={() => open('new')}>
          New {spec.singular}
        </button>
      </div>
      {editing && (
        <EditCard
          title={editing === 'new' ? `New ${spec.singular}` : `Edit ${editing.name}`}
          submitLabel={editing === 'new' ? `Create ${spec.singular}` : 'Save'}
          form={form}
          onSubmit={submit}
          onCancel={() => setEditing(undefined)}
        >
          {spec.fields.map((field) => {
            if (field.when && !field.when(values)) return null;
            const record = editing === 'new' ? undefined : editing;
            if (field.render) return <div key={field.name}>{field.render({ values, set, record, errors })}</div>;
            const common = {
              key: field.name,
              label: field.label,
              name: field.name,
              value: values[field.name] ?? '',
              errors,
              hint: typeof field.hint === 'function' ? field.hint(record) : field.hint,
            };
            if (field.kind === 'textarea') return <TextArea {...common} onInput={set(field.name)} rows={6} required={field.required} />;
            if (field.kind === 'select') return <Select {...common} onChange={set(field.name)} options={field.options ?? []} />;
            if (field.kind === 'color') {
              return (
                <div class="row color" key={field.name}>
                  <TextField {...common} onInput={set(field.name)} required={field.required} />
                  <span
                    class="swatch big"
                    style={{ backgroundColor: /^#[0-9a-f]{3,8}$/i.test(common.value) ? common.value : 'transparent' }}
                    aria-hidden="true"
                  />
                </div>
              );
            }
            return <TextField {...common} onInput={set(field.name)} required={field.required} />;
          })}
        </EditCard>
      )}
      <PagedView list={list} error={error} empty={spec.empty}>
        {(records) => (
          <ul class="cards" aria-label={spec.title}>
            {records.map((record) => (
              <li key={record.id} class="card">
                <h2>{record.name}</h2>
                {spec.summary(record)}
                <p class="actions">
                  <button type="button" onClick={() => open(record)}>
                    Edit<span class="visually-hidden"> {record.name}</span>
                  </button>
                  <DeleteButton
                    path={`${spec.path}/${encodeURIComponent(record.id)}`}
                    question={`Delete “${record.name}”?`}
                    then={async () => {
                      if (editing !== 'new' && editing?.id === record.id) setEditing(undefined);
                      await list.load();
                    }}
                    onError={setError}
                  />
                </p>
              </li>
            ))}
          </ul>
        )}
      </PagedView>
    </section>
  );
}

/** The choices of the form, in this order; typed by the server's tool kinds, so a kind added there must be added here. */
const TOOL_TYPES: Record<ToolType, string> = {
  SEARCH: 'SEARCH (a SearXNG instance)',
  OPENAPI: 'OPENAPI (operations of an OpenAPI document)',
  MCP: 'MCP (the tools of an MCP server)',
  AGENT: 'AGENT (asks another of your agents)',
  ENGINE_ALPHA: 'ENGINE_ALPHA (plain HTTP tool)',
  HOSTED_MODEL: 'HOSTED_MODEL (plain HTTP tool)',
  AUTOMATION_NLA: 'AUTOMATION_NLA (plain HTTP tool)',
};

// An MCP tool's settings have fields of their own: the server's URL, its headers (write-only: the
// API says only whether they are set) and the allow-list, picked from what the server offers.
const isMcp = (values: Values) => values.type === 'MCP';
const MCP_URL = 'metadata.url';
const MCP_HEADERS = 'metadata.headers';
const MCP_TOOLS = 'metadata.tools';
/** The allow-list as the picker found it (JSON), to tell whether it was changed. */
const MCP_TOOLS_LOADED = 'mcp.loaded';

/** `Name: value` lines as a headers object, or the line that is not one. */
function parseHeaders(text: string): Record<string, string> | string {
  const headers: Record<string, string> = {};
  for (const line of text
    .split('\n')
    .map((entry) => entry.trim())
    .filter(Boolean)) {
    const colon = line.indexOf(':');
    if (colon < 1) return line;
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The metadata of the MCP fields; undefined to keep what is stored; a string names a field and its mistake. */
function mcpMetadata(values: Values, editing: boolean): Record<string, unknown> | undefined | string {
  const url = (values[MCP_URL] ?? '').trim();
  const headerText = values[MCP_HEADERS] ?? '';
  const tools = values[MCP_TOOLS] ?? '';
  const toolsChanged = tools !== (values[MCP_TOOLS_LOADED] ?? '');
  if (!url) {
    if (!editing) return `${MCP_URL}\u0000the server's URL is needed`;
    if (headerText.trim() || toolsChanged)
      return `${MCP_URL}\u0000type the server's URL again to change its headers or tools (it is never shown)`;
    return undefined;
  }
  const headers = parseHeaders(headerText);
  if (typeof headers === 'string') return `${MCP_HEADERS}\u0000each line must be Name: value (not "${headers.slice(0, 40)}")`;
  return {
    url,
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(tools ? { tools: JSON.parse(tools) as string[] } : {}),
  };
}

interface ToolFunctions {
  functions: { name: string; description: string; mcpTool?: string; allowed?: boolean }[];
  warnings: string[];
  allowList?: string[] | null;
}

/**
 * The allow-list of a saved MCP tool, picked from every tool its server offers now (asked of the
 * server, the stored list not applied): unticking one leaves it out, ticking it again lets it back.
 * With every tool ticked there is no list: the tools the server adds later are offered too. A new
 * tool offers all of its server's tools until it is saved.
 */
function McpToolPicker({ values, set, record, errors }: FieldContext<Tool>) {
  const [found, setFound] = useState<ToolFunctions>();
  const [failure, setFailure] = useState<string>();
  const id = record?.type === 'MCP' ? record.id : undefined;
  useEffect(() => {
    if (!id) return;
    let current = true;
    call<ToolFunctions>('GET', `/tools/${encodeURIComponent(id)}/functions?all=true`)
      .then((answer) => {
        if (!current) return;
        setFound(answer);
        // '' is no list (every tool); the stored list otherwise.
        const stored = answer.allowList ? JSON.stringify(answer.allowList) : '';
        set(MCP_TOOLS)(stored);
        set(MCP_TOOLS_LOADED)(stored);
      })
      .catch((error) => current && setFailure(describeError(error)));
    return () => {
      current = false;
    };
  }, [id]);
  const messages = errors.fields.filter((issue) => issue.path.startsWith(MCP_TOOLS)).map((issue) => issue.message);
  const list = values[MCP_TOOLS] ? new Set<string>(JSON.parse(values[MCP_TOOLS]) as string[]) : undefined;
  const isTicked = (name: string) => list === undefined || list.has(name);
  const toggle = (name: string, on: boolean) => {
    const shown = (found?.functions ?? []).map((fn) => fn.mcpTool ?? fn.name);
    // Names on the list the server did not show now (past what a run is offered, or gone for a while) stay on it.
    const unshown = list ? [...list].filter((entry) => !shown.includes(entry)) : [];
    const names = shown.filter((entry) => (entry === name ? on : isTicked(entry)));
    set(MCP_TOOLS)(names.length === shown.length && unshown.length === 0 ? '' : JSON.stringify([...names, ...unshown]));
  };
  return (
    <fieldset data-field={MCP_TOOLS}>
      <legend>Allowed tools</legend>
      {!id ? (
        <p class="hint">Every tool of the server is offered. Save this tool, then edit it to choose among them.</p>
      ) : failure ? (
        <ErrorNotice error={failure} />
      ) : !found ? (
        <Loading />
      ) : found.functions.length === 0 ? (
        <p class="hint">The server offers nothing now{found.warnings.length ? `: ${found.warnings.join('; ')}` : '.'}</p>
      ) : (
        <>
          {found.functions.map((fn) => {
            const name = fn.mcpTool ?? fn.name;
            return (
              <div class="field checkbox" key={name}>
                <input
                  type="checkbox"
                  id={`mcp-tool-${name}`}
                  checked={isTicked(name)}
                  onChange={(event) => toggle(name, event.currentTarget.checked)}
                />
                <label for={`mcp-tool-${name}`}>{name}</label>
                <p class="hint">{fn.description}</p>
              </div>
            );
          })}
          <p class="hint">
            Untick what this tool should not offer; with every tool ticked, the tools the server adds later are offered too. The server's
            URL is needed again to save a change.
          </p>
        </>
      )}
      <FieldError messages={messages} />
    </fieldset>
  );
}

const TOOLS: ResourceSpec<Tool> = {
  path: '/tools',
  title: 'Tools',
  singular: 'tool',
  empty: 'No tools yet. A tool lets an agent search the web, call an HTTP API or ask another agent; create one, then link it to an agent.',
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'type', label: 'Type', kind: 'select', options: Object.entries(TOOL_TYPES) },
    { name: 'description', label: 'Description', hint: 'What the model is told the tool does.' },
    {
      name: 'metadata',
      label: 'Settings (JSON)',
      kind: 'textarea',
      when: (values) => !isMcp(values),
      hint: 'For example {"url": "http://127.0.0.1:8080"} for SEARCH, {"agentId": "…"} for AGENT. Settings hold secrets and are never shown again: leave this empty when editing to keep them.',
    },
    {
      name: MCP_URL,
      label: 'Server URL',
      when: isMcp,
      hint: (record) =>
        record?.type === 'MCP'
          ? 'Never shown again: leave it empty to keep the settings as they are; type it to change the headers or the allowed tools.'
          : 'A Streamable HTTP MCP endpoint, e.g. https://mcp.example.com/mcp.',
    },
    {
      name: MCP_HEADERS,
      label: 'Headers',
      kind: 'textarea',
      when: isMcp,
      hint: (record) => (
        <>
          {record?.type === 'MCP' && (
            <>
              Headers: <strong data-field="headers-state">{record.hasHeaders ? 'set' : 'none'}</strong> (never shown).{' '}
              {record.hasHeaders ? 'Type them again, or new ones, when you change the settings; empty means none. ' : ''}
            </>
          )}
          One per line, Name: value, e.g. Authorization: Bearer …; sent with each request to the server.
        </>
      ),
    },
    { name: MCP_TOOLS, label: 'Allowed tools', when: isMcp, render: (context) => <McpToolPicker {...context} /> },
  ],
  blank: { name: '', type: 'SEARCH', description: '', metadata: '' },
  valuesOf: (tool) => ({ name: tool.name, type: tool.type, description: tool.description ?? '', metadata: '' }),
  bodyOf: (values, editing) => {
    const body: Record<string, unknown> = { name: values.name, type: values.type, description: values.description.trim() || null };
    if (isMcp(values)) {
      const metadata = mcpMetadata(values, editing);
      if (typeof metadata === 'string') return metadata;
      if (metadata) body.metadata = metadata;
    } else if (values.metadata.trim()) {
      try {
        body.metadata = JSON.parse(values.metadata);
      } catch {
        return 'metadata\u0000must be JSON, e.g. {"url": "https://…"}';
      }
    } else if (!editing) body.metadata = {};
    return body;
  },
  summary: (tool) => (
    <p class="muted">
      {tool.type}
      {tool.hasHeaders ? ' · headers set' : ''}
      {tool.description ? ` · ${tool.description}` : ''}
    </p>
  ),
};

const PROMPTS: ResourceSpec<Prompt> = {
  path: '/prompts',
  title: 'Prompts',
  singular: 'prompt',
  empty:
    'No prompts yet. A prompt is an agent’s instructions; write {name} for a value asked for in the chat, and list each such name as a variable.',
  fields: [
    { name: 'name', label: 'Name', required: true },
    {
      name: 'template',
      label: 'Template',
      kind: 'textarea',
      required: true,
      hint: 'Write {variable} where a value goes; {{ and }} are literal braces. {input} is the user’s message.',
    },
    { name: 'input_variables', label: 'Variables', hint: 'The names used in the template, separated by commas, e.g. topic, tone.' },
  ],
  blank: { name: '', template: '', input_variables: '' },
  valuesOf: (prompt) => ({ name: prompt.name, template: prompt.template, input_variables: prompt.input_variables.join(', ') }),
  bodyOf: (values) => ({
    name: values.name,
    template: values.template,
    input_variables: values.input_variables
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  }),
  summary: (prompt) => (
    <>
      <p class="text clip-lines">{prompt.template}</p>
      <p class="muted">{prompt.input_variables.length ? `Variables: ${prompt.input_variables.join(', ')}` : 'No variables'}</p>
    </>
  ),
};

const TAGS: ResourceSpec<Tag> = {
  path: '/tags',
  title: 'Tags',
  singular: 'tag',
  empty: 'No tags yet. Tags group agents; create one, then pick it in an agent’s form.',
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'color', label: 'Colour', kind: 'color', hint: 'A hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa.' },
  ],
  blank: { name: '', color: '#0e8a16' },
  valuesOf: (tag) => ({ name: tag.name, color: tag.color }),
  bodyOf: (values) => ({ name: values.name, color: values.color }),
  summary: (tag) => (
    <p>
      <TagChip name={tag.color} color={tag.color} />
    </p>
  ),
};

/**
 * The other direction: the user's agents as tools of an MCP host, through the service's /mcp.
 * The snippets name no token: one is made on the Tokens page and pasted in. Cursor and Claude Code
 * read their servers under `mcpServers`; VS Code's mcp.json under `servers`.
 */
function McpHostPanel() {
  const url = `${location.origin}/mcp`;
  const server = { agents: { type: 'http', url, headers: { Authorization: 'Bearer <your API token>' } } };
  const config = JSON.stringify({ mcpServers: server }, null, 2);
  const vscode = JSON.stringify({ servers: server }, null, 2);
  return (
    <section class="card" aria-label="Use your agents from an MCP host">
      <h2>Use your agents from an MCP host</h2>
      <p class="muted">
        Claude Desktop, VS Code, Cursor and other MCP hosts can call each of your agents as a tool (and search your documents) at this URL,
        with an API token from the Tokens page.
      </p>
      <p>
        <code data-field="mcp-url">{url}</code>
      </p>
      <p class="muted">mcp.json for Cursor, Claude Code and other hosts that list servers under mcpServers:</p>
      <pre class="json" data-field="mcp-json">
        {config}
      </pre>
      <p class="muted">.vscode/mcp.json for VS Code:</p>
      <pre class="json" data-field="mcp-json-vscode">
        {vscode}
      </pre>
    </section>
  );
}

export const ToolsPage = () => (
  <>
    <ResourcePage spec={TOOLS} />
    <McpHostPanel />
  </>
);
export const PromptsPage = () => <ResourcePage spec={PROMPTS} />;
export const TagsPage = () => <ResourcePage spec={TAGS} />;
