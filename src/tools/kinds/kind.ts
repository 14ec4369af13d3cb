// What a tool kind is: one object that says what its `metadata` holds, which of it is secret, what
// the model reads about it, and how it becomes functions for a run. The kinds are listed in
// index.ts; nothing else in the service names a kind.
import type * as v from 'valibot';
import type { ToolFunction } from '../../lib/tool-contract.js';
import { ToolError, type ToolHttp } from '../runtime/http-call.js';

/** A tool record as a run needs it: metadata unsealed. */
export interface ToolRecord {
  id: string;
  name: string;
  type: string;
  description?: string | null;
  metadata: Record<string, unknown>;
  /** Its link to the running agent asks for a person's approval of each call. */
  requiresApproval?: boolean;
}

/** What a kind is given to turn one tool record into functions, at the start of a run. */
export interface BuildContext {
  tool: ToolRecord;
  /** How its requests go out: the guarded fetch, the per-request timeout, its secrets (redacted from answers). */
  http: ToolHttp;
  /** The run's signal and deadline (for what a kind fetches before it can offer anything). */
  signal: AbortSignal;
  deadline: number;
  /** The caller's agent with this id, or undefined. */
  findAgent(agentId: string): { id: string; name: string } | undefined;
  /**
   * A function name unique within the run, from `text` (`asIs`: text already is a function name,
   * kept as it is but for a suffix); taken only for a function that is offered.
   */
  name(text: string, asIs?: boolean): string;
}

/**
 * The functions of one tool, what was left out of it, and what ends its connection when the run
 * ends (`close`); or why it offers none (said in the run's warnings; `unavailable`: its server could
 * not be reached, which the model is told as well).
 */
export type Built =
  | { ok: true; value: { functions: ToolFunction[]; warnings: string[]; close?: () => Promise<void> } }
  | { ok: false; reason: string; unavailable?: boolean };

export interface ToolKind<Type extends string = string> {
  /** The `type` clients send and get back. */
  type: Type;
  /** A few words on what it is, for people choosing a type. */
  label: string;
  /**
   * Checks the metadata keys this kind reads, where they are given, and keeps every other key:
   * clients put settings of their own there (a 422 on `metadata.<key>` otherwise).
   */
  metadataSchema: v.GenericSchema<Record<string, unknown>> | v.GenericSchemaAsync<Record<string, unknown>>;
  /** Metadata keys whose every value is secret; any key named like a key, token or password is too. */
  secretFields: readonly string[];
  /**
   * Metadata keys holding a document the kind reads (OPENAPI's `spec`): the names inside it (paths,
   * properties, schemas such as `password` or `TokenRequest`) are the document's, not credentials.
   */
  specFields?: readonly string[];
  /** Its answers say whether `metadata.headers` is set (`hasHeaders`); the headers are never shown. */
  showsHasHeaders?: boolean;
  /** Metadata keys that name one of the caller's agents: checked when the tool is created or changed. */
  agentFields?: readonly string[];
  /** What the model reads about a tool of this kind that has no description (`detail`: what it calls). */
  describe(detail?: string): string;
  /** The functions a tool of this kind offers in one run. */
  build(context: BuildContext): Promise<Built>;
}

/** `kind` as declared, its `type` kept as the literal it is. */
export const defineKind = <const Type extends string>(kind: ToolKind<Type>): ToolKind<Type> => kind;

/** One function offered, nothing left out. */
export const offered = (fn: ToolFunction): Built => ({ ok: true, value: { functions: [fn], warnings: [] } });

/** The one string field `field` of the model's arguments, or a ToolError saying what was expected. */
export function stringArgument(args: unknown, field: string): string {
  const value = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>)[field] : undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new ToolError(`invalid arguments: expected {"${field}": "<non-empty string>"}`);
  return value;
}
