// Every string a client sends must be well-formed Unicode. A lone UTF-16 surrogate ("a\ud800b" in a
// JSON body) cannot be stored as UTF-8: SQLite would keep invalid bytes and hand back U+FFFD, so the
// record would silently change. Percent-encoded bytes that are not UTF-8 in a query would be replaced
// the same way. Both are refused with a 422 naming the field, once for every request, before routing.
import { validationFailed, type FieldIssue } from './errors.js';
import type { AppMiddleware } from './context.js';

const NOT_WELL_FORMED = 'is not well-formed Unicode (it contains a lone surrogate)';
const NOT_WELL_FORMED_KEY = 'has a key that is not well-formed Unicode (it contains a lone surrogate)';
const NOT_UTF8 = 'is not well-formed Unicode (its percent-encoding is not UTF-8)';
/** With the u flag a surrogate pair reads as one code point, so this matches lone surrogates only. */
const LONE_SURROGATE = /\p{Surrogate}/u;
const isWellFormed = (text: string) => !LONE_SURROGATE.test(text);
/** Enough to show what is wrong without a list as long as the body. */
const MAX_ISSUES = 10;

/**
 * The strings in a parsed JSON value (object keys included) that are not well-formed Unicode, by
 * their dotted path as validation names fields ("" for the value itself). Iterative, so any depth is
 * safe; in document order.
 */
export function malformedStrings(value: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (!isWellFormed(node)) issues.push({ path, message: NOT_WELL_FORMED });
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    const entries = Object.entries(node);
    if (entries.some(([key]) => !isWellFormed(key))) issues.push({ path, message: NOT_WELL_FORMED_KEY });
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i];
      if (isWellFormed(key)) stack.push([child, path === '' ? key : `${path}.${key}`]);
    }
  }
  return issues;
}

/** A `\uD800`–`\uDFFF` escape in JSON text (any case). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * False when JSON parsed from `text` cannot hold a lone surrogate: the text has none itself and no
 * escape that makes one. So most bodies skip the walk of `malformedStrings`. True (walk) when the
 * text is not known.
 */
export function mayHoldLoneSurrogate(text: unknown): boolean {
  return typeof text !== 'string' || !isWellFormed(text) || SURROGATE_ESCAPE.test(text);
}

/** Throws the 422 for a parsed body that holds a string that is not well-formed Unicode. */
export function assertWellFormedBody(body: unknown): void {
  const issues = malformedStrings(body);
  if (issues.length > 0) throw validationFailed(issues);
}

/**
 * Middleware: a query parameter (name or value) whose percent-encoding does not decode as UTF-8 is
 * a 422 naming the parameter (by its name as sent when the name itself is the bad part).
 */
export function wellFormedQuery(): AppMiddleware {
  return function wellFormedQueryMiddleware(ctx, next) {
    // Most URLs have nothing percent-encoded: they pass without the query being split out.
    if (ctx.req.url?.includes('%')) {
      const query = ctx.querystring;
      const issues: FieldIssue[] = [];
      for (const pair of query.split('&')) {
        const at = pair.indexOf('=');
        const rawName = at === -1 ? pair : pair.slice(0, at);
        const name = decode(rawName);
        if (name === undefined || decode(at === -1 ? '' : pair.slice(at + 1)) === undefined) {
          issues.push({ path: name ?? rawName, message: NOT_UTF8 });
        }
        if (issues.length >= MAX_ISSUES) break;
      }
      if (issues.length > 0) throw validationFailed(issues);
    }
    return next();
  };
}

/** A query component decoded as the query parser does, or undefined when it is not UTF-8. */
function decode(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}
