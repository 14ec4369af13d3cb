// Search reads the searching user's chunks only, through the owner column of the full-text index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDatabase, openDatabase } from '../src/db.js';
import { createStores } from '../src/stores.js';
import { createSealer } from '../src/lib/secrets.js';
import { searchWords } from '../src/documents/search.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-search-'));
const db = openDatabase(join(dir, 'search.db'));
const stores = createStores(db, createSealer(randomBytes(32)));
test.after(() => {
  closeDatabase(db);
  rmSync(dir, { recursive: true, force: true });
});

function userWithChunks(email: string, chunks: string[]) {
  const user = stores.users.create({ email, name: email, passwordHash: 'x' });
  const document = stores.documents.create(user.id, {
    name: 'notes',
    type: 'TXT',
    url: 'https://example.com/notes.txt',
    from_page: 1,
    to_page: null,
    authorization: null,
    splitter: null,
    metadata: {},
  } as never);
  const job = stores.chunks.claim(document.id)!;
  assert.ok(stores.chunks.storeChunks(job, chunks, 0));
  const summary = {
    chunks: chunks.length,
    characters: 1,
    pages: null,
    pagesRead: null,
    splitter: { type: 'character' as const, chunk_size: 1000, chunk_overlap: 0 },
    ingestedAt: 'now',
  };
  assert.ok(stores.chunks.complete(job, summary));
  return { user, document };
}

const search = (userId: string, text: string) =>
  stores.search.find({ userId }, searchWords(text, 'all')!, { match: 'all', limit: 100, snippet: { words: 24, marked: true } });

test("a search finds the caller's chunks only, ranked, and never matches the owner's id", () => {
  const alice = userWithChunks('alice@example.com', ['otters hold hands', 'otters and otters float', 'beavers build dams']);
  const bob = userWithChunks('bob@example.com', ['otters everywhere', 'owls nest']);
  const hits = search(alice.user.id, 'otters');
  assert.equal(hits.length, 2);
  assert.ok(hits.every((hit) => hit.documentId === alice.document.id));
  assert.ok(hits[0].score >= hits[1].score, 'best first');
  assert.equal(search(bob.user.id, 'otters').length, 1);
  assert.equal(search(bob.user.id, 'beavers').length, 0, "another user's words are not found");
  // The owner column is indexed, but only the content column is searched.
  const firstPartOfId = alice.user.id.split('-')[0];
  assert.equal(search(alice.user.id, firstPartOfId).length, 0);
  assert.equal(search(alice.user.id, alice.user.id).length, 0);
});

test('deleted chunks leave the index with their owner', () => {
  const carol = userWithChunks('carol@example.com', ['herons wade slowly']);
  assert.equal(search(carol.user.id, 'herons').length, 1);
  db.prepare('DELETE FROM document_chunks WHERE user_id = ?').run(carol.user.id);
  assert.equal(db.prepare(`SELECT count(*) FROM document_chunks_fts WHERE document_chunks_fts MATCH 'herons'`).pluck().get(), 0);
});
