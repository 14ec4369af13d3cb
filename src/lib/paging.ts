// Keyset pagination shared by every list: rows in creation order, `after` the last id seen.

/** What a client asked for: at most `limit` rows created after the row `afterSeq`. */
export interface PageRequest {
  limit: number;
  afterSeq: number;
}

/** One page of rows, and whether more exist after it. */
export interface Page<Row> {
  rows: Row[];
  hasMore: boolean;
}

/** Turns `limit + 1` fetched rows into a page (the extra row only says that more exist). */
export function toPage<Row>(fetched: Row[], limit: number): Page<Row> {
  return fetched.length > limit ? { rows: fetched.slice(0, limit), hasMore: true } : { rows: fetched, hasMore: false };
}
