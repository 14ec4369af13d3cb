// Comparing where URLs point: a secret stored next to a URL only ever goes to that URL's origin.

/** The origin (scheme, host, port) of `url`; undefined for none or an unparsable one. */
export function originOf(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** True when both name the same origin (two absent URLs count as the same: the default place). */
export function sameOrigin(a: string | null | undefined, b: string | null | undefined): boolean {
  return originOf(a) === originOf(b);
}
