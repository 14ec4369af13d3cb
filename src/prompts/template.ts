// Placeholders of a prompt template: `{name}` is a variable; `{{` and `}}` are literal braces.
import type { FieldIssue } from '../http/errors.js';

/** A piece of a template: literal text (its doubled braces made single) or a variable's name. */
type TemplatePart = { text: string } | { variable: string };

const BRACE = /[{}]/g;

/** The template cut into its parts, in order; or an error saying what is malformed. */
function parseTemplate(template: string): { parts: TemplatePart[] } | { error: string } {
  const parts: TemplatePart[] = [];
  let text = '';
  let start = 0; // where the literal text not yet added to `text` begins
  for (let i = nextBrace(template, 0); i !== -1; i = nextBrace(template, i)) {
    const char = template[i];
    if (template[i + 1] === char) {
      text += template.slice(start, i + 1); // one of the two braces
      i += 2;
      start = i;
      continue;
    }
    if (char === '}') return { error: `has a "}" at position ${i} that closes nothing (write "}}" for a literal brace)` };
    const end = template.indexOf('}', i + 1);
    const name = end === -1 ? '' : template.slice(i + 1, end);
    if (end === -1 || name.includes('{')) {
      return { error: `has a "{" at position ${i} that is never closed (write "{{" for a literal brace)` };
    }
    if (!VARIABLE_NAME.test(name)) return { error: `has a placeholder "{${name}}" that is not a variable name` };
    text += template.slice(start, i);
    if (text !== '') parts.push({ text });
    text = '';
    parts.push({ variable: name });
    i = end + 1;
    start = i;
  }
  text += template.slice(start);
  if (text !== '') parts.push({ text });
  return { parts };
}

/** The position of the next `{` or `}` from `from`, or -1. */
function nextBrace(template: string, from: number): number {
  BRACE.lastIndex = from;
  return BRACE.exec(template)?.index ?? -1;
}

/** The variable names a template uses, in first-use order; or an error saying what is malformed. */
export function templateVariables(template: string): { variables: string[] } | { error: string } {
  const parsed = parseTemplate(template);
  if ('error' in parsed) return parsed;
  // A Set: a 100,000-character template can hold ~17,000 placeholders; a list check would be quadratic.
  const variables = new Set<string>();
  for (const part of parsed.parts) if ('variable' in part) variables.add(part.variable);
  return { variables: [...variables] };
}

/**
 * The template with each `{name}` replaced by `valueOf(name)` and `{{`/`}}` by single braces, and
 * the names that had no value (in first-use order, each once), left as written. A malformed
 * template (never stored: every write of a prompt checks it) is answered as written.
 */
export function fillTemplate(
  template: string,
  valueOf: (name: string) => string | undefined,
  maxChars = Number.MAX_SAFE_INTEGER,
): { text: string; missing: string[]; tooLong: boolean } {
  const parsed = parseTemplate(template);
  if ('error' in parsed) return { text: template, missing: [], tooLong: false };
  const missing = new Set<string>();
  const pieces: string[] = [];
  // Counted as it is filled: a template may name one large value thousands of times, so the text
  // is never built past maxChars.
  let length = 0;
  for (const part of parsed.parts) {
    let piece: string;
    if ('text' in part) piece = part.text;
    else {
      const value = valueOf(part.variable);
      if (value === undefined) missing.add(part.variable);
      piece = value ?? `{${part.variable}}`;
    }
    length += piece.length;
    if (length > maxChars) return { text: '', missing: [...missing], tooLong: true };
    pieces.push(piece);
  }
  return { text: pieces.join(''), missing: [...missing], tooLong: false };
}

/** At most 10 names, then how many more: messages stay short whatever the template holds. */
function someNames(names: string[], format: (name: string) => string = (name) => name): string {
  const shown = names.slice(0, 10).map(format).join(', ');
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}

/** What `input_variables` may hold: identifiers such as `topic` or `user_name`. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why a template and its declared variables disagree (as a field issue), or undefined when they match. */
export function templateMismatch(template: string, declared: string[]): FieldIssue | undefined {
  const parsed = templateVariables(template);
  if ('error' in parsed) return { path: 'template', message: parsed.error };
  const used = new Set(parsed.variables);
  const listed = new Set(declared);
  const missing = parsed.variables.filter((name) => !listed.has(name));
  const unused = declared.filter((name) => !used.has(name));
  const problems = [];
  if (missing.length > 0)
    problems.push(
      `the template uses ${someNames(missing, (n) => `{${n}}`)} but input_variables does not list ${missing.length > 1 ? 'them' : 'it'}`,
    );
  if (unused.length > 0)
    problems.push(`input_variables lists ${someNames(unused)} but the template does not use ${unused.length > 1 ? 'them' : 'it'}`);
  return problems.length > 0 ? { path: 'input_variables', message: problems.join('; ') } : undefined;
}
