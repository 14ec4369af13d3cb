// Identifiers and timestamps as the API shows them.
import { randomUUID } from 'node:crypto';

/** A new opaque, unguessable record id (UUID v4: 122 random bits). */
export function newId(): string {
  return randomUUID();
}

/** Now, as ISO 8601 in UTC with six fractional digits: 2026-11-22T10:15:30.123456+00:00. */
export function timestamp(): string {
  return formatTimestamp(performance.timeOrigin + performance.now());
}

/** A time in milliseconds since the epoch (fractions kept to the microsecond) in the API's format. */
export function formatTimestamp(ms: number): string {
  const wholeMs = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - wholeMs) * 1000));
  const iso = new Date(wholeMs).toISOString(); // 2026-11-22T10:15:30.123Z
  return `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}+00:00`;
}
