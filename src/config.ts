// Reads the service's settings from the environment once, at boot (after `.env`, when present, has
// been loaded under the real environment). A bad value stops the process with a message naming every
// bad setting and its value (never a secret's), so a typo never runs with a silent default.
import * as v from 'valibot';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseSecretKey } from './lib/secrets.js';

/** The scrypt cost of new password hashes (cost = 2^logN). */
export interface ScryptCost {
  logN: number;
  r: number;
  p: number;
}

/** Everything the app needs to know about its environment. */
export interface Config {
  host: string;
  port: number;
  databasePath: string;
  scrypt: ScryptCost;
  /** Password hashes computed at the same time (each holds a core and 32 MiB while it runs). */
  hashConcurrency: number;
  /** Password hashes that may wait for a turn; beyond them sign-in and sign-up answer 503 at once. */
  hashQueueMax: number;
  bodyLimitBytes: number;
  /** Largest file uploaded as a document (multipart/form-data); larger ones get 413 while they arrive. */
  uploadMaxBytes: number;
  /** How long a token made by sign-in stays valid. */
  signInTokenTtlMs: number;
  /** Write one JSON line per request to stdout. */
  logRequests: boolean;
  /** Anyone may create an account with POST /auth/sign-up (off: only the operator's user:create). */
  signUp: boolean;
  /**
   * Lifts the SSRF guard for every URL a user can aim (document URLs, and any later outbound
   * request a user configures): loopback, private and link-local addresses become reachable.
   */
  allowPrivateNetworks: boolean;
  /** How long one request of a tool may take (an HTTP call, an MCP server's answer); past it the model is told the call failed. */
  toolTimeoutMs: number;
  /** Cut off a request whose headers and body have not arrived within this time. */
  requestTimeoutMs: number;
  /** On SIGTERM, wait this long for in-flight requests before closing their connections. */
  shutdownTimeoutMs: number;
  /** Believe the last X-Forwarded-For hop (only behind a reverse proxy you run). */
  trustProxy: boolean;
  /** Origins allowed to call the API from a browser; empty: CORS off. */
  corsOrigins: string[];
  /** Litestream replicates the database and owns checkpointing (no WAL truncation at shutdown). */
  litestream: boolean;
  rateLimit: RateLimitConfig;
  /** SECRET_KEY, when set; otherwise the key file beside the database is used. */
  secretKey?: Buffer;
  ingestion: IngestionConfig;
  runs: RunsConfig;
  runBounds: RunBoundsConfig;
}

/** How agents run: the operator's model servers and the limits of a run. */
export interface RunsConfig {
  /** The operator's OpenAI-compatible server for provider `openai` (trusted: not SSRF-checked). */
  openaiBaseUrl: string;
  openaiApiKey?: string;
  /** The operator's Ollama server (its OpenAI-compatible `/v1`) for provider `ollama` (trusted). */
  ollamaBaseUrl: string;
  /** Deadline of a whole run, nested runs and tool calls included. */
  timeoutMs: number;
  /** Runs one user may have going at once (nested runs not counted). */
  concurrencyPerUser: number;
  /** Model calls one run may make before it fails. */
  maxSteps: number;
  /** Deadline of a background run (`background: true`), instead of timeoutMs. */
  backgroundTimeoutMs: number;
  /** Background runs one user may have waiting for a slot (`queued`); one more gets 429. */
  queuePerUser: number;
  /** How long a run waits for its tool calls to be approved before it fails. */
  approvalTtlMs: number;
  /** Days a finished run's event log is kept (its record stays); 0 keeps it for ever. */
  eventsRetentionDays: number;
}

/** How much of what the model controls a run keeps: the parts past these are cut or refused, with a warning. */
export interface RunBoundsConfig {
  /** Longest answer a run keeps, streams and stores (UTF-8 bytes); a longer one is cut. */
  answerMaxBytes: number;
  /** Tool calls one run may make; the model is told when further ones are refused. */
  maxToolCalls: number;
  /** Most of a session's earlier turns replayed to the model (UTF-8 bytes; the newest turns are kept). */
  memoryMaxBytes: number;
}

export interface IngestionConfig {
  /** Off: documents stay pending (a sandbox without network, or tests that do not ingest). */
  enabled: boolean;
  concurrency: number;
  maxBytes: number;
  timeoutMs: number;
  /** Allow URLs on loopback/private/link-local addresses (off by default: SSRF). */
  allowPrivateNetworks: boolean;
}

export interface RateLimitConfig {
  enabled: boolean;
  /** Sign-up and sign-in attempts per client address per minute. */
  authPerMinute: number;
  /** Failed sign-ins per email per 15 minutes, after which that email is refused for a while. */
  failedSignInsPer15Minutes: number;
  /** Requests per API token per minute. */
  perTokenPerMinute: number;
}

/** OWASP's minimum for scrypt without 128 MiB per hash: production never goes below. */
export const MIN_SCRYPT: ScryptCost = { logN: 15, r: 8, p: 3 };

/**
 * PASSWORD_HASH_COST=test: a hash ~100 times cheaper, so an integration test suite can create many
 * users quickly. Worthless against a stolen database, so only where NODE_ENV says it is a test.
 */
export const TEST_SCRYPT: ScryptCost = { logN: 10, r: 8, p: 1 };
const TEST_NODE_ENVS = ['test', 'development'];

const integerSetting = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

const httpUrlSetting = v.pipe(
  v.string(),
  v.trim(),
  v.check((text) => /^https?:\/\/[^/]/i.test(text) && URL.canParse(text), 'must be an http(s) URL such as http://127.0.0.1:11434/v1'),
  v.transform((text) => text.replace(/\/+$/, '')),
);

const TRUE_WORDS = ['on', 'true', '1', 'yes'];
const FALSE_WORDS = ['off', 'false', '0', 'no'];

/** A boolean setting: on/off, true/false, 1/0 or yes/no, in any case. */
const onOff = v.pipe(
  v.string(),
  v.transform((text) => text.trim().toLowerCase()),
  v.picklist([...TRUE_WORDS, ...FALSE_WORDS], 'must be on or off (also accepted: true/false, 1/0, yes/no)'),
  v.transform((word) => TRUE_WORDS.includes(word)),
);

const EnvSchema = v.object({
  HOST: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), '127.0.0.1'),
  PORT: v.optional(integerSetting(0, 65535), '3000'),
  DATABASE_PATH: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), 'data/service.db'),
  SCRYPT_LOG_N: v.optional(integerSetting(MIN_SCRYPT.logN, 20), String(MIN_SCRYPT.logN)),
  SCRYPT_R: v.optional(integerSetting(MIN_SCRYPT.r, 32), String(MIN_SCRYPT.r)),
  SCRYPT_P: v.optional(integerSetting(MIN_SCRYPT.p, 16), String(MIN_SCRYPT.p)),
  PASSWORD_HASH_COST: v.optional(v.picklist(['default', 'test'], 'must be default or test'), 'default'),
  HASH_CONCURRENCY: v.optional(integerSetting(1, 64), '1'),
  HASH_QUEUE_MAX: v.optional(integerSetting(0, 10_000), '100'),
  BODY_LIMIT_BYTES: v.optional(integerSetting(1024, 100 * 1024 * 1024), String(1024 * 1024)),
  UPLOAD_MAX_BYTES: v.optional(integerSetting(1024, 1024 * 1024 * 1024), String(20 * 1024 * 1024)),
  SIGN_IN_TOKEN_TTL_DAYS: v.optional(integerSetting(1, 3650), '30'),
  LOG_REQUESTS: v.optional(onOff, 'on'),
  SIGN_UP: v.optional(onOff, 'on'),
  REQUEST_TIMEOUT_MS: v.optional(integerSetting(1000, 3_600_000), '30000'),
  SHUTDOWN_TIMEOUT_MS: v.optional(integerSetting(0, 600_000), '10000'),
  TRUST_PROXY: v.optional(onOff, 'off'),
  CORS_ORIGINS: v.optional(
    v.pipe(
      v.string(),
      v.transform((list) =>
        list
          .split(',')
          .map((origin) => origin.trim())
          .filter(Boolean),
      ),
      v.check((origins) => origins.every(isOrigin), 'must be a comma-separated list of origins such as https://app.example.com'),
    ),
    '',
  ),
  RATE_LIMIT: v.optional(onOff, 'on'),
  RATE_LIMIT_AUTH_PER_MINUTE: v.optional(integerSetting(1, 1_000_000), '30'),
  RATE_LIMIT_FAILED_SIGN_INS: v.optional(integerSetting(1, 1_000_000), '10'),
  RATE_LIMIT_TOKEN_PER_MINUTE: v.optional(integerSetting(1, 100_000_000), '6000'),
  INGEST: v.optional(onOff, 'on'),
  INGEST_CONCURRENCY: v.optional(integerSetting(1, 32), '2'),
  INGEST_MAX_BYTES: v.optional(integerSetting(1024, 1024 * 1024 * 1024), String(20 * 1024 * 1024)),
  INGEST_TIMEOUT_MS: v.optional(integerSetting(1000, 600_000), '30000'),
  ALLOW_PRIVATE_NETWORKS: v.optional(onOff, 'off'),
  OPENAI_BASE_URL: v.optional(httpUrlSetting, 'https://api.openai.com/v1'),
  OPENAI_API_KEY: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'))),
  OLLAMA_BASE_URL: v.optional(httpUrlSetting, 'http://127.0.0.1:11434/v1'),
  RUN_TIMEOUT_MS: v.optional(integerSetting(1000, 3_600_000), '120000'),
  RUN_CONCURRENCY_PER_USER: v.optional(integerSetting(1, 1000), '4'),
  RUN_BACKGROUND_TIMEOUT_MS: v.optional(integerSetting(1000, 86_400_000), '1800000'),
  RUN_QUEUE_PER_USER: v.optional(integerSetting(0, 100_000), '100'),
  RUN_APPROVAL_TTL_MS: v.optional(integerSetting(1000, 31 * 86_400_000), '86400000'),
  RUN_EVENTS_RETENTION: v.optional(integerSetting(0, 36_500), '30'),
  TOOL_TIMEOUT_MS: v.optional(integerSetting(100, 600_000), '30000'),
  RUN_MAX_STEPS: v.optional(integerSetting(1, 100), '8'),
  RUN_ANSWER_MAX_BYTES: v.optional(integerSetting(1024, 16 * 1024 * 1024), String(1024 * 1024)),
  RUN_MAX_TOOL_CALLS: v.optional(integerSetting(1, 1000), '64'),
  RUN_MEMORY_MAX_BYTES: v.optional(integerSetting(0, 16 * 1024 * 1024), String(256 * 1024)),
  LITESTREAM: v.optional(onOff, 'off'),
  SECRET_KEY: v.optional(
    v.pipe(
      v.string(),
      v.transform(parseSecretKey),
      v.check((key) => key !== undefined, 'must be 32 bytes, as 64 hex digits or base64'),
    ),
  ),
});

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}

/** The names of every setting read from the environment (aliases aside). */
export const SETTINGS = Object.keys(EnvSchema.entries);

/** Older names still read: alias → the setting it stands for (the setting wins when both are set). */
export const SETTING_ALIASES: Record<string, keyof typeof EnvSchema.entries> = {
  INGEST_ALLOW_PRIVATE_NETWORKS: 'ALLOW_PRIVATE_NETWORKS',
};

/** Settings whose value is never repeated in a message. */
const SECRET_SETTINGS = new Set(['SECRET_KEY']);

/** `NAME=value` for messages, or just `NAME` for a secret setting. */
export function describeSetting(name: string, value: string | undefined): string {
  return SECRET_SETTINGS.has(name) || value === undefined ? name : `${name}=${value}`;
}

/**
 * Loads `.env` from the working directory into `process.env` when the file exists (variables
 * already set in the environment win). Returns the absolute path of the file read, or null.
 */
export function loadEnvFile(dir = process.cwd()): string | null {
  const path = resolve(dir, '.env');
  if (!existsSync(path)) return null;
  try {
    process.loadEnvFile(path);
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
  return path;
}

/** Parses the environment; throws an Error listing every bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const given = (key: string) => env[key] !== undefined && env[key] !== '';
  const known: Record<string, string | undefined> = Object.fromEntries(SETTINGS.filter(given).map((key) => [key, env[key]]));
  // Where a setting came from, for messages: its own name or the alias that gave it.
  const source: Record<string, string> = {};
  for (const [alias, setting] of Object.entries(SETTING_ALIASES)) {
    if (given(alias) && !given(setting)) {
      known[setting] = env[alias];
      source[setting] = alias;
    }
  }
  const result = v.safeParse(EnvSchema, known);
  // Name the setting and its value (never a secret's).
  const problems = (result.issues ?? []).map((issue) => {
    const key = v.getDotPath(issue) ?? '';
    const name = source[key] ?? key;
    return `${describeSetting(name, known[key])}: ${issue.message}`;
  });
  if (known.PASSWORD_HASH_COST === 'test' && !TEST_NODE_ENVS.includes(env.NODE_ENV ?? '')) {
    const nodeEnv = env.NODE_ENV ? `NODE_ENV=${env.NODE_ENV}` : 'NODE_ENV is not set';
    problems.push(`PASSWORD_HASH_COST=test: a cheap hash for tests, refused unless NODE_ENV is test or development (${nodeEnv})`);
  }
  if (!result.success || problems.length > 0) {
    // One bad setting: one line. Several: one line each, under a heading.
    if (problems.length === 1) throw new Error(`invalid configuration: ${problems[0]}`);
    throw new Error(`invalid configuration:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
  }
  const settings = result.output;
  return {
    host: settings.HOST,
    port: settings.PORT,
    databasePath: resolve(settings.DATABASE_PATH),
    scrypt:
      settings.PASSWORD_HASH_COST === 'test' ? TEST_SCRYPT : { logN: settings.SCRYPT_LOG_N, r: settings.SCRYPT_R, p: settings.SCRYPT_P },
    hashConcurrency: settings.HASH_CONCURRENCY,
    hashQueueMax: settings.HASH_QUEUE_MAX,
    bodyLimitBytes: settings.BODY_LIMIT_BYTES,
    uploadMaxBytes: settings.UPLOAD_MAX_BYTES,
    signInTokenTtlMs: settings.SIGN_IN_TOKEN_TTL_DAYS * 24 * 60 * 60 * 1000,
    logRequests: settings.LOG_REQUESTS,
    signUp: settings.SIGN_UP,
    allowPrivateNetworks: settings.ALLOW_PRIVATE_NETWORKS,
    toolTimeoutMs: settings.TOOL_TIMEOUT_MS,
    requestTimeoutMs: settings.REQUEST_TIMEOUT_MS,
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    trustProxy: settings.TRUST_PROXY,
    corsOrigins: settings.CORS_ORIGINS,
    litestream: settings.LITESTREAM,
    rateLimit: {
      enabled: settings.RATE_LIMIT,
      authPerMinute: settings.RATE_LIMIT_AUTH_PER_MINUTE,
      failedSignInsPer15Minutes: settings.RATE_LIMIT_FAILED_SIGN_INS,
      perTokenPerMinute: settings.RATE_LIMIT_TOKEN_PER_MINUTE,
    },
    secretKey: settings.SECRET_KEY,
    ingestion: {
      enabled: settings.INGEST,
      concurrency: settings.INGEST_CONCURRENCY,
      maxBytes: settings.INGEST_MAX_BYTES,
      timeoutMs: settings.INGEST_TIMEOUT_MS,
      allowPrivateNetworks: settings.ALLOW_PRIVATE_NETWORKS,
    },
    runs: {
      openaiBaseUrl: settings.OPENAI_BASE_URL,
      openaiApiKey: settings.OPENAI_API_KEY,
      ollamaBaseUrl: settings.OLLAMA_BASE_URL,
      timeoutMs: settings.RUN_TIMEOUT_MS,
      concurrencyPerUser: settings.RUN_CONCURRENCY_PER_USER,
      maxSteps: settings.RUN_MAX_STEPS,
      backgroundTimeoutMs: settings.RUN_BACKGROUND_TIMEOUT_MS,
      queuePerUser: settings.RUN_QUEUE_PER_USER,
      approvalTtlMs: settings.RUN_APPROVAL_TTL_MS,
      eventsRetentionDays: settings.RUN_EVENTS_RETENTION,
    },
    runBounds: {
      answerMaxBytes: settings.RUN_ANSWER_MAX_BYTES,
      maxToolCalls: settings.RUN_MAX_TOOL_CALLS,
      memoryMaxBytes: settings.RUN_MEMORY_MAX_BYTES,
    },
  };
}
