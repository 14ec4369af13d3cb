// SQL of document search: the chunks of a user's documents that match some words, ranked by BM25
// over that user's chunks (relevanceScores in search.ts). GET /documents/search and the context a
// run puts before the model both search through it, so they find and rank the same chunks.
import type { Db } from '../db.js';
import { relevanceScores, wordsQuery, type Match } from './search.js';

/** Whose chunks a search reads: the user's, optionally only one document's or one agent's documents. */
export interface SearchScope {
  userId: string;
  documentId?: string;
  /** The agent's own `documentId` and the documents linked to it. */
  agentId?: string;
}

export interface SearchOptions {
  match: Match;
  /** How many hits, best first. */
  limit: number;
  /** Words of text around the matches, and whether they are marked (\u0001 … \u0002, see snippetHtml). */
  snippet: { words: number; marked: boolean };
}

export interface SearchHit {
  chunkId: string;
  documentId: string;
  documentName: string;
  position: number;
  content: string;
  /** Relevance from 0 to 1: higher is better (see relevanceScores in search.ts). */
  score: number;
  /** Text around the matches (see SearchOptions.snippet). */
  rawSnippet: string;
}

export type SearchStore = ReturnType<typeof createSearchStore>;

export function createSearchStore(db: Db) {
  // Every MATCH names the owner (the index's `owner` column: the user's id without dashes) as well
  // as the words, so FTS5 reads only the user's matches; c.user_id is checked again. The ranking is
  // computed here rather than by FTS5's bm25(), which counts each word's matches across every
  // user's chunks: a cost that grows with all users' data, and an order that changes with it.
  // Readers see the chunks of the generation each document shows (see ingestion-store.ts), except a
  // failed document's: one being re-ingested keeps its previous chunks until the new ones are in,
  // one whose re-ingestion failed has them still but is no longer searched or read by runs.
  const countMatches = db.prepare(`SELECT count(*) FROM document_chunks_fts WHERE document_chunks_fts MATCH ?`).pluck();
  const selectMatches = db.prepare(`SELECT rowid FROM document_chunks_fts WHERE document_chunks_fts MATCH ?`).pluck();
  const selectCandidates = db
    .prepare(
      `SELECT c.seq, c.content
       FROM document_chunks_fts
       JOIN document_chunks c ON c.seq = document_chunks_fts.rowid
       JOIN documents d ON d.id = c.document_id AND d.chunks_generation = c.generation AND d.status <> 'failed'
      WHERE document_chunks_fts MATCH @match AND c.user_id = @userId
        AND (@documentId IS NULL OR c.document_id = @documentId)
        AND (@agentId IS NULL OR c.document_id IN
              (SELECT document_id FROM agent_documents WHERE agent_id = @agentId AND user_id = @userId
               UNION SELECT document_id FROM agents WHERE id = @agentId AND user_id = @userId AND document_id IS NOT NULL))`,
    )
    .raw();
  // Whether the agent has any document at all: most agents have none, and a run of each asks.
  const selectAgentHasDocuments = db
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM agent_documents WHERE agent_id = @agentId AND user_id = @userId)
         OR EXISTS (SELECT 1 FROM agents WHERE id = @agentId AND user_id = @userId AND document_id IS NOT NULL)`,
    )
    .pluck();
  // One hit and its snippet. The chunk is named twice: by the index's rowid, bound as a BigInt (a JS
  // number is bound as a REAL, and FTS5 then ignores `rowid = ?` and reads every match), which makes
  // FTS5 read that one row; and by c.seq, which holds for any binding, so the answer is that chunk's.
  const selectHit = db.prepare(
    `SELECT c.id AS chunkId, c.document_id AS documentId, d.name AS documentName, c.position,
            snippet(document_chunks_fts, 0, @open, @close, '…', @words) AS rawSnippet
       FROM document_chunks_fts
       JOIN document_chunks c ON c.seq = document_chunks_fts.rowid
       JOIN documents d ON d.id = c.document_id
      WHERE document_chunks_fts MATCH @match AND document_chunks_fts.rowid = @seq AND c.seq = @seq`,
  );
  const ownerTerm = (userId: string) => `owner : "${userId.replaceAll('-', '').replaceAll('"', '""')}"`;

  const findInTransaction = db.transaction((scope: SearchScope, words: string[], options: SearchOptions): SearchHit[] => {
    const { userId, documentId = null, agentId = null } = scope;
    if (agentId !== null && !selectAgentHasDocuments.get({ agentId, userId })) return [];
    const owner = ownerTerm(userId);
    const match = `${owner} AND content : (${wordsQuery(words, options.match)})`;
    const rows = selectCandidates.all({ match, userId, documentId, agentId }) as [number, string][];
    if (rows.length === 0) return [];
    // Each word's matches among the user's chunks: how many (BM25's idf) and, when a chunk need not
    // hold every word, which ones.
    const wordMatch = (word: string) => `${owner} AND content : ${wordsQuery([word], 'all')}`;
    let holds: ((chunk: number, word: number) => boolean) | undefined;
    let matching: number[];
    if (options.match === 'all') {
      matching = words.map((word) => countMatches.get(wordMatch(word)) as number);
    } else {
      const sets = words.map((word) => new Set(selectMatches.all(wordMatch(word)) as number[]));
      matching = sets.map((set) => set.size);
      holds = (chunk, word) => sets[word].has(rows[chunk][0]);
    }
    const stats = { chunks: countMatches.get(owner) as number, matching };
    const scores = relevanceScores(
      rows.map((row) => row[1]),
      words,
      stats,
      holds,
    );
    const best = rows.map(([seq, content], i) => ({ seq, content, score: scores[i] }));
    best.sort((a, b) => b.score - a.score || a.seq - b.seq);
    const snippet = options.snippet.marked ? { open: '\u0001', close: '\u0002' } : { open: '', close: '' };
    return best.slice(0, options.limit).map(({ seq, content, score }) => ({
      ...(selectHit.get({ match, seq: BigInt(seq), words: options.snippet.words, ...snippet }) as Omit<SearchHit, 'content' | 'score'>),
      content,
      score,
    }));
  });

  return {
    /** The chunks in scope matching the words (`all` of them or `any`), best first: BM25 over the user's chunks, 0 to 1. */
    find(scope: SearchScope, words: string[], options: SearchOptions): SearchHit[] {
      return findInTransaction(scope, words, options);
    },
  };
}
