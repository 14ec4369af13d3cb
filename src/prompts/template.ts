// Placeholders of a prompt template: `{name}` is a variable; `{{` and `}}` are literal braces.
import type { FieldIssue } from '../http/errors.js';

/** The variable names a template uses, in first-use order; or an error saying what is malformed. */
export function templateVariables(template: string): { variables: string[] } | { error: string } {
  // A Set: a 100,000-character template can hold ~17,000 placeholders; a list check would be quadratic.
  const variables = new Set<string>();
  let i = 0;
  while (i < template.length) {
    const char = template[i];
    if ((char === '{' || char === '}') && template[i + 1] === char) {
      i += 2;
      continue;
    }
    if (char === '}') return { error: `has a "}" at position ${i} that closes nothing (write "}}" for a literal brace)` };
    if (char === '{') {
      const end = template.indexOf('}', i + 1);
      const name = end === -1 ? '' : template.slice(i + 1, end);
      if (end === -1 || name.includes('{')) {
        return { error: `has a "{" at position ${i} that is never closed (write "{{" for a literal brace)` };
      }
      if (!VARIABLE_NAME.test(name)) return { error: `has a placeholder "{${name}}" that is not a variable name` };
      variables.add(name);
      i = end + 1;
      continue;
    }
    i += 1;
  }
  return { variables: [...variables] };
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
  if (missing.length > 0) problems.push(`the template uses ${someNames(missing, (n) => `{${n}}`)} but input_variables does not list ${missing.length > 1 ? 'them' : 'it'}`);
  if (unused.length > 0) problems.push(`input_variables lists ${someNames(unused)} but the template does not use ${unused.length > 1 ? 'them' : 'it'}`);
  return problems.length > 0 ? { path: 'input_variables', message: problems.join('; ') } : undefined;
}
