// Identifiers and timestamps as the API shows them.
import { randomUUID } from 'node:crypto';

/**
 * A new opaque, unguessable record id: a UUID v7, its first 48 bits the time in milliseconds and
 * the other 74 (but the version and variant) random. Ids made one after another sort together, so
 * a new row's entry in an index on its id (and on the ids it refers to: a message's run) lands on
 * the index's last page, already in the cache and dirtied by the row before, instead of on a random
 * page read and written for it alone: a stored conversation turn wrote some 8 pages, 5 of them random.
 */
export function newId(): string {
  // A v4 UUID's random bits, its first 48 replaced by the time and its version nibble by 7 (the
  // variant bits are the same for both versions).
  const random = randomUUID();
  const ms = Date.now().toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${random.slice(15)}`;
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
