// Structured logging: one JSON object per line. Callers pass fields, never request bodies or secrets.

export interface Logger {
  info(fields: Record<string, unknown>): void;
  error(fields: Record<string, unknown>): void;
}

/** One JSON line: `time` and `level` first, then the fields. */
function jsonLine(level: string, fields: Record<string, unknown>): string {
  const rest = JSON.stringify(fields);
  return `{"time":"${new Date().toISOString()}","level":"${level}"${rest.length > 2 ? `,${rest.slice(1)}` : '}'}\n`;
}

// Info lines (one per request when the request log is on) are gathered and written once per turn of
// the event loop: writes to a pipe or file are synchronous system calls, one per line otherwise.
// What is gathered is written at exit too.
let gathered = '';
let flushScheduled = false;
function flushInfo(): void {
  flushScheduled = false;
  if (gathered === '') return;
  const text = gathered;
  gathered = '';
  process.stdout.write(text);
}
process.on('exit', flushInfo);

/** Writes JSON lines: info to stdout, errors to stderr (at once). */
export const jsonLogger: Logger = {
  info: (fields) => {
    gathered += jsonLine('info', fields);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushInfo);
    }
  },
  error: (fields) => {
    flushInfo();
    process.stderr.write(jsonLine('error', fields));
  },
};

/** What a log line keeps of an unexpected error: its stack (which starts with the message). */
export function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Drops everything (tests that do not look at logs). */
export const silentLogger: Logger = { info: () => {}, error: () => {} };
