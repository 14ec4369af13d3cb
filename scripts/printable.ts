// User text (names, token descriptions) as the operator scripts print it. Whatever a row holds (rows
// stored before the service refused control characters may hold any), those characters reach the
// operator's terminal written out as escapes, never as themselves: a user's name cannot clear the
// screen, recolour it or forge a line of the table.

/**
 * C0 and C1 controls and DEL, the Unicode line and paragraph separators, and the bidirectional
 * controls, which reorder what a terminal shows after them.
 */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** The same without C0: in JSON.stringify's output those are escaped already, or are its own line breaks. */
const UNPRINTABLE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** How JSON writes `char` in a string: `\n`, `\t`, `\r`, or `\u001b` and the like. */
const escape = (char: string) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` on one line, each of its control characters written as a JSON string would write it. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escape);
}

/** JSON text with the characters JSON.stringify leaves as they are (DEL, C1, ...) escaped: the same JSON value. */
export function printableJson(json: string): string {
  return json.replace(UNPRINTABLE_IN_JSON, escape);
}
