// Structured logging: one JSON object per line. Callers pass fields, never request bodies or secrets.

export interface Logger {
  info(fields: Record<string, unknown>): void;
  error(fields: Record<string, unknown>): void;
}

/** Writes JSON lines: info to stdout, errors to stderr. */
export const jsonLogger: Logger = {
  info: (fields) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', ...fields })}\n`),
  error: (fields) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', ...fields })}\n`),
};

/** What a log line keeps of an unexpected error: its stack (which starts with the message). */
export function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Drops everything (tests that do not look at logs). */
export const silentLogger: Logger = { info: () => {}, error: () => {} };
