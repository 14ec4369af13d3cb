// Reads the service's settings from the environment once, at boot. A bad value stops the process
// with a message naming every bad setting, so a typo never runs with a silent default.
import * as v from 'valibot';
import { resolve } from 'node:path';

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
  bodyLimitBytes: number;
  /** How long a token made by sign-in stays valid. */
  signInTokenTtlMs: number;
  /** Write one JSON line per request to stdout. */
  logRequests: boolean;
}

/** OWASP's minimum for scrypt without 128 MiB per hash (decisions.md): production never goes below. */
export const MIN_SCRYPT: ScryptCost = { logN: 15, r: 8, p: 3 };

const integerSetting = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

const EnvSchema = v.object({
  HOST: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), '127.0.0.1'),
  PORT: v.optional(integerSetting(0, 65535), '3000'),
  DATABASE_PATH: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), 'data/service.db'),
  SCRYPT_LOG_N: v.optional(integerSetting(MIN_SCRYPT.logN, 20), String(MIN_SCRYPT.logN)),
  SCRYPT_R: v.optional(integerSetting(MIN_SCRYPT.r, 32), String(MIN_SCRYPT.r)),
  SCRYPT_P: v.optional(integerSetting(MIN_SCRYPT.p, 16), String(MIN_SCRYPT.p)),
  BODY_LIMIT_BYTES: v.optional(integerSetting(1024, 100 * 1024 * 1024), String(1024 * 1024)),
  SIGN_IN_TOKEN_TTL_DAYS: v.optional(integerSetting(1, 3650), '30'),
  LOG_REQUESTS: v.optional(v.picklist(['on', 'off'], 'must be "on" or "off"'), 'on'),
});

/** Settings and their meaning, for the startup error message and the README's table. */
export const SETTINGS = Object.keys(EnvSchema.entries);

/** Parses the environment; throws an Error listing every bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const known = Object.fromEntries(
    SETTINGS.filter((key) => env[key] !== undefined && env[key] !== '').map((key) => [key, env[key]]),
  );
  const result = v.safeParse(EnvSchema, known);
  if (!result.success) {
    const problems = result.issues.map((issue) => `  ${v.getDotPath(issue)}: ${issue.message}`);
    throw new Error(`invalid configuration:\n${problems.join('\n')}`);
  }
  const settings = result.output;
  return {
    host: settings.HOST,
    port: settings.PORT,
    databasePath: resolve(settings.DATABASE_PATH),
    scrypt: { logN: settings.SCRYPT_LOG_N, r: settings.SCRYPT_R, p: settings.SCRYPT_P },
    bodyLimitBytes: settings.BODY_LIMIT_BYTES,
    signInTokenTtlMs: settings.SIGN_IN_TOKEN_TTL_DAYS * 24 * 60 * 60 * 1000,
    logRequests: settings.LOG_REQUESTS === 'on',
  };
}
