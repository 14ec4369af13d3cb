// Function names the model sees: lowercase [a-z0-9_], at most 64 characters, unique within a run
// (`_2`, `_3` … appended to repeats).

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
  return (text: string, asIs = false): string => {
    const base = asIs ? text.slice(0, MAX_FUNCTION_NAME) : functionNameOf(text);
    let name = base;
    for (let n = 2; taken.has(name); n += 1) {
      const suffix = `_${n}`;
      name = base.slice(0, MAX_FUNCTION_NAME - suffix.length).replace(/_$/, '') + suffix;
    }
    taken.add(name);
    return name;
  };
}
