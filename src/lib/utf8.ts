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
