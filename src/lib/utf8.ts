// Cutting text to a size in UTF-8 bytes (what a model, a tool or a store counts).

/** `text` cut to at most `maxBytes` of UTF-8, never inside a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text; // no character takes more than 3 bytes per UTF-16 unit
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1; // back to the start of a character
  return bytes.subarray(0, end).toString('utf8');
}

/** `text` cut to at most `max` UTF-16 code units (as string lengths and NameSchema count), never between the halves of a surrogate pair. */
export function cutToLength(text: string, max: number): string {
  if (text.length <= max) return text;
  const lead = text.charCodeAt(max - 1);
  return text.slice(0, lead >= 0xd800 && lead <= 0xdbff ? max - 1 : max);
}

/**
 * A name NameSchema accepts, made of any text (a file's name, a name in another service's export):
 * one line, each control character or line break a space, trimmed, cut to 200; `fallback` when
 * nothing is left.
 */
export function nameFrom(text: string, fallback: string): string {
  return cutToLength(text.replace(/[\p{Cc}\u2028\u2029]/gu, ' ').trim(), 200).trim() || fallback;
}
