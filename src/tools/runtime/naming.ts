// Function names the model sees: lowercase [a-z0-9_], at most 64 characters, unique within a run
// (`_2`, `_3` … appended to repeats), and a default description per tool type.

export const MAX_FUNCTION_NAME = 64;

/** `text` as a function name: accents dropped, lowercase, every other character `_`, never empty. */
export function functionNameOf(text: string): string {
  const name = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, MAX_FUNCTION_NAME)
    .replace(/_$/, '');
  return name === '' ? 'tool' : name;
}

/** Hands out unique names within one run: the first `x`, then `x_2`, `x_3` … (cut to fit 64). */
export function createFunctionNamer() {
  const taken = new Set<string>();
  return (text: string): string => {
    const base = functionNameOf(text);
    let name = base;
    for (let n = 2; taken.has(name); n += 1) {
      const suffix = `_${n}`;
      name = base.slice(0, MAX_FUNCTION_NAME - suffix.length).replace(/_$/, '') + suffix;
    }
    taken.add(name);
    return name;
  };
}

export type FunctionNamer = ReturnType<typeof createFunctionNamer>;

/** What the model reads about a tool whose record has no description. */
export function defaultDescription(type: string, detail?: string): string {
  switch (type) {
    case 'SEARCH':
      return 'Searches the web. Returns the top 5 results (title, url, content) as JSON. Use it for recent events or facts you do not know.';
    case 'AGENT':
      return `Asks ${detail ? `the agent "${detail}"` : 'another agent'} a question and returns its answer.`;
    case 'OPENAPI':
      return detail ?? 'Calls an operation of a web API.';
    default:
      return 'Sends the input to an external service and returns its answer as text.';
  }
}
