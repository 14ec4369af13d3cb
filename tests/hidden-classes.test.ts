// The presenters on hot paths give every object they make the same hidden class. On Node 20,
// `{ ...object, newKey }` gave each object a hidden class of its own, kept in V8's old generation:
// every GET /agents/{id} then fed full garbage collections (pauses of 5-8 ms every few seconds at
// 1,000 req/s). Node 26 shares the class either way, so there these tests pass with or without it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import v8 from 'node:v8';
import { presentAgent } from '../src/agents/present.js';
import type { AgentRow } from '../src/agents/store.js';
import type { Caller } from '../src/http/context.js';
import { presentSignedUpUser } from '../src/users/present.js';
import type { UserRow } from '../src/users/store.js';

v8.setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

/** Calls `make` often enough for V8 to settle on its optimised path, then compares the last two objects. */
function lastTwo<T extends object>(make: (i: number) => T): [T, T] {
  let previous = make(0);
  let last = make(1);
  for (let i = 2; i < 20_000; i++) [previous, last] = [last, make(i)];
  return [previous, last];
}

const at = '2026-01-01T00:00:00.000000+00:00';
const owner: Caller = { id: 'u1', email: 'a@example.com', name: 'a', createdAt: at, updatedAt: at, tokenId: 't1' };
const agentRow = (i: number): AgentRow => ({
  id: `agent-${i}`,
  userId: owner.id,
  name: `Agent ${i}`,
  type: 'VENDOR_A',
  llmModel: 'm',
  llmProvider: 'openai',
  llmBaseUrl: null,
  hasApiKey: false,
  llmConnectionId: null,
  hasMemory: i % 2 === 0,
  promptId: null,
  documentId: null,
  description: null,
  avatarUrl: null,
  isListed: false,
  memorySessions: 0,
  memoryMessages: 0,
  createdAt: at,
  updatedAt: at,
  document: null,
  tags: [{ id: 'tag-1', userId: owner.id, name: 'one', color: '#000000', createdAt: at, updatedAt: at }],
});

describe('presenters keep one hidden class', () => {
  test('presentAgent: every agent it presents has the same hidden class', () => {
    const [a, b] = lastTwo((i) => presentAgent(agentRow(i), owner));
    assert.equal(a.id === b.id, false);
    assert.equal(haveSameMap(a, b), true);
  });

  test('presentSignedUpUser: every user it presents has the same hidden class', () => {
    const user = (i: number): UserRow => ({
      id: `user-${i}`,
      email: `${i}@example.com`,
      name: `${i}`,
      passwordHash: '$scrypt$x',
      createdAt: at,
      updatedAt: at,
      disabledAt: null,
    });
    const [a, b] = lastTwo((i) => presentSignedUpUser(user(i)));
    assert.equal(a.id === b.id, false);
    assert.equal(haveSameMap(a, b), true);
  });
});
