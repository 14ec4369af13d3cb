// The console's only way to the service: the public JSON API under api/v1, with the bearer token
// kept in sessionStorage (gone when the tab closes, cleared on a 401). Never logs the token.
// What the console remembers beyond the tab (prompt variables) is in localStorage until sign-out.

/** One bad field of a 422, as the API's `error.details` names it. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** A failure answer of the API (or of the network, with status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldIssue[] = [],
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'agent-console.token';
const TOKEN_ID_KEY = 'agent-console.tokenId';
/** Followed by an agent's id: its remembered prompt variables (localStorage). */
const VARIABLES_KEY = 'agent-console.variables.';
/** Followed by an agent's id: the background runs this tab's chat started with it (sessionStorage). */
const RUNS_KEY = 'agent-console.background-runs.';
/** Background runs remembered per agent (the newest kept). */
const REMEMBERED_RUNS = 20;

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  tokenId: () => sessionStorage.getItem(TOKEN_ID_KEY),
  save(token: string, tokenId: string) {
    sessionStorage.setItem(TOKEN_KEY, token);
    sessionStorage.setItem(TOKEN_ID_KEY, tokenId);
  },
  /** Forgets the token, and what this browser remembers for the user (signing out, a 401, deletion). */
  clear() {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(TOKEN_ID_KEY);
    for (const key of Object.keys(localStorage)) if (key.startsWith(VARIABLES_KEY)) localStorage.removeItem(key);
    for (const key of Object.keys(sessionStorage)) if (key.startsWith(RUNS_KEY)) sessionStorage.removeItem(key);
  },
};

/** A background run the chat started: the chat comes back to it until it has seen it end. */
export interface RememberedRun {
  runId: string;
  sessionId: string | null;
}

/** The background runs the chat started with an agent, in this tab (sessionStorage), oldest first. */
export const rememberedRuns = {
  load(agentId: string): RememberedRun[] {
    try {
      const saved: unknown = JSON.parse(sessionStorage.getItem(RUNS_KEY + agentId) ?? '[]');
      if (!Array.isArray(saved)) return [];
      return saved.filter(
        (run): run is RememberedRun => typeof run?.runId === 'string' && (run.sessionId === null || typeof run.sessionId === 'string'),
      );
    } catch {
      return [];
    }
  },
  add(agentId: string, run: RememberedRun) {
    const runs = [...rememberedRuns.load(agentId).filter((saved) => saved.runId !== run.runId), run].slice(-REMEMBERED_RUNS);
    rememberedRuns.save(agentId, runs);
  },
  forget(agentId: string, runId: string) {
    rememberedRuns.save(
      agentId,
      rememberedRuns.load(agentId).filter((saved) => saved.runId !== runId),
    );
  },
  save(agentId: string, runs: RememberedRun[]) {
    try {
      if (runs.length === 0) sessionStorage.removeItem(RUNS_KEY + agentId);
      else sessionStorage.setItem(RUNS_KEY + agentId, JSON.stringify(runs));
    } catch {
      // Storage full or refused: the run is only not come back to (its page still has it).
    }
  },
};

/**
 * The prompt variables last sent to an agent, per agent, in localStorage: a chat with the agent
 * starts with them filled in, in this tab and later ones, until the user signs out.
 */
export const rememberedVariables = {
  load(agentId: string): Record<string, string> {
    try {
      const saved: unknown = JSON.parse(localStorage.getItem(VARIABLES_KEY + agentId) ?? '{}');
      if (saved === null || typeof saved !== 'object' || Array.isArray(saved)) return {};
      return Object.fromEntries(Object.entries(saved).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    } catch {
      return {};
    }
  },
  save(agentId: string, values: Record<string, string>) {
    try {
      localStorage.setItem(VARIABLES_KEY + agentId, JSON.stringify(values));
    } catch {
      // Storage full or refused (a private window): the values are only not remembered.
    }
  },
};

let unauthorizedListener: (() => void) | undefined;
/** Called when the API answers 401 to a signed-in request (the token was revoked or expired). */
export function onUnauthorized(listener: () => void): void {
  unauthorizedListener = listener;
}

/** The service root, relative to the page (works behind a proxy that mounts it under a path). */
const API = 'api/v1';

export interface Page<T> {
  items: T[];
  /** The `after` id of the next page, when the `Link` header names one. */
  next?: string;
}

interface Options {
  body?: unknown;
  signal?: AbortSignal;
  /** Ask for a streamed answer (invoke); the raw Response is returned when it is one. */
  raw?: boolean;
}

/** Sends one request; resolves to the Response when it succeeded, else throws an ApiError. */
export async function send(method: string, path: string, options: Options = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: options.raw ? 'text/event-stream, application/json' : 'application/json' };
  const token = session.token();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${API}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'network', 'The service could not be reached. Check that it is running.');
  }
  if (response.ok) return response;
  let failure: { code?: string; message?: string; details?: unknown } = {};
  try {
    failure = ((await response.json()) as { error?: typeof failure }).error ?? {};
  } catch {
    // not an envelope (a proxy's page, say): the status speaks for itself
  }
  const details = Array.isArray(failure.details)
    ? (failure.details as FieldIssue[]).filter((issue) => typeof issue?.path === 'string')
    : [];
  const error = new ApiError(
    response.status,
    failure.code ?? 'http_' + response.status,
    failure.message ?? `The service answered ${response.status}.`,
    details,
    response.headers.get('Retry-After') ?? undefined,
  );
  if (response.status === 401 && token) {
    session.clear();
    unauthorizedListener?.();
  }
  throw error;
}

/**
 * Sends a multipart form (a file upload) and resolves to the envelope's `data`. XMLHttpRequest, not
 * fetch: only it reports how much of the body has been sent (`onProgress`).
 */
export function upload<T>(path: string, form: FormData, onProgress: (sent: number, total: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    const token = session.token();
    request.open('POST', `${API}${path}`);
    request.setRequestHeader('Accept', 'application/json');
    if (token) request.setRequestHeader('Authorization', `Bearer ${token}`);
    request.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : 0);
    request.onerror = () => reject(new ApiError(0, 'network', 'The service could not be reached. Check that it is running.'));
    request.onload = () => {
      let answer: { data?: T; error?: { code?: string; message?: string; details?: unknown } } = {};
      try {
        answer = JSON.parse(request.responseText);
      } catch {
        // not an envelope (a proxy's page, say): the status speaks for itself
      }
      if (request.status >= 200 && request.status < 300) return resolve(answer.data as T);
      const failure = answer.error ?? {};
      const details = Array.isArray(failure.details)
        ? (failure.details as FieldIssue[]).filter((issue) => typeof issue?.path === 'string')
        : [];
      if (request.status === 401 && token) {
        session.clear();
        unauthorizedListener?.();
      }
      reject(
        new ApiError(
          request.status,
          failure.code ?? 'http_' + request.status,
          failure.message ?? `The service answered ${request.status}.`,
          details,
        ),
      );
    };
    request.send(form);
  });
}

/** The longest message `invoke` takes, in UTF-16 code units as the API counts (its `input` limit). */
export const MAX_INPUT_CHARS = 100_000;

/** A request whose answer is the envelope's `data`. */
export async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const response = await send(method, path, { body, signal });
  return ((await response.json()) as { data: T }).data;
}

export const get = <T>(path: string, signal?: AbortSignal) => call<T>('GET', path, undefined, signal);

/** One page of a list: `after` is the last id of the previous page. */
export async function list<T>(path: string, limit = 50, after?: string): Promise<Page<T>> {
  const query = new URLSearchParams({ limit: String(limit) });
  if (after) query.set('after', after);
  const response = await send('GET', `${path}${path.includes('?') ? '&' : '?'}${query}`);
  const items = ((await response.json()) as { data: T[] }).data;
  const link = response.headers.get('Link') ?? '';
  const next = /<([^>]*)>;\s*rel="next"/.exec(link)?.[1];
  return { items, next: next ? (new URL(next, location.href).searchParams.get('after') ?? undefined) : undefined };
}

/** Every item of a list (for pickers: prompts, tags, documents, tools), a thousand at a time. */
export async function listAll<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  do {
    const page = await list<T & { id: string }>(path, 1000, after);
    items.push(...page.items);
    after = page.next;
  } while (after);
  return items;
}

// ---- The records the console shows ----------------------------------------------------------
// The service's own answer shapes: `import type` is erased by the bundler, so none of the service's
// code (nor valibot) reaches the browser, and a field the service changes breaks the console's build.

import type * as v from 'valibot';
import type { Agent } from '../../agents/schema.js';
import type { ApiToken } from '../../api-tokens/schema.js';
import type { ChunkSchema, Document, SearchHitSchema } from '../../documents/schema.js';
import type { AgentDocument, AgentTool } from '../../links/schema.js';
import type { Prompt } from '../../prompts/schema.js';
import type {
  MessageSchema,
  PendingActionSchema,
  RunAcceptedSchema,
  RunListItemShape,
  RunShape,
  SessionSchema,
  SourceSchema,
  StepSchema,
} from '../../runs/schema.js';
import type { Tag } from '../../tags/schema.js';
import type { Tool } from '../../tools/schema.js';
import type { User } from '../../users/schema.js';
import type { Delivery, Webhook, WebhookEvent } from '../../webhooks/schema.js';
import type { Connection } from '../../connections/schema.js';

export type { Agent, ApiToken, Connection, Prompt, Tag, Tool, User, Webhook, WebhookEvent };
export type WebhookDelivery = Delivery;
export type DocumentRecord = Document;
export type Chunk = v.InferOutput<typeof ChunkSchema>;
export type SearchHit = v.InferOutput<typeof SearchHitSchema>;
/** A link of an agent to a document or a tool (GET /agent-documents, /agent-tools). */
export type Link = AgentDocument | AgentTool;
export type Step = v.InferOutput<typeof StepSchema>;
export type Source = v.InferOutput<typeof SourceSchema>;
/** A run in full (GET /runs/{id}). */
export type Run = RunShape;
/** A run in a list: its long parts cut (`truncated` says so). */
export type RunListItem = RunListItemShape;
/** A tool call waiting for the user's approval (a run's `actions` while `requires_action`). */
export type PendingAction = v.InferOutput<typeof PendingActionSchema>;
/** What a background invoke answers at once (202). */
export type RunAccepted = v.InferOutput<typeof RunAcceptedSchema>;
/** The statuses of a run that has not ended: it can be followed and cancelled. */
export const UNDER_WAY: readonly string[] = ['queued', 'running', 'requires_action'];
export type ChatSession = v.InferOutput<typeof SessionSchema>;
export type ChatMessage = v.InferOutput<typeof MessageSchema>;
