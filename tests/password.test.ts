// src/auth/password.ts: scrypt hashes in the PHC-style string that carries its own cost, checked
// against an independent scrypt implementation (the scrypt-js dev dependency).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import scryptJs from 'scrypt-js';
import { hashPassword, PasswordHasher, verifyPassword } from '../src/auth/password.js';
import { ApiError } from '../src/http/errors.js';

const FAST = { logN: 10, r: 8, p: 1 };
const HASH = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

/** The parts of a hash string, read here without the module under test. */
function partsOf(hash: string) {
  const match = HASH.exec(hash);
  assert.ok(match, `not a $scrypt$ hash: ${hash}`);
  const [, logN, r, p, salt, key] = match;
  return {
    cost: { logN: Number(logN), r: Number(r), p: Number(p) },
    salt: Buffer.from(salt, 'base64'),
    key: Buffer.from(key, 'base64'),
  };
}

describe('hashPassword', () => {
  test('writes $scrypt$ln=..,r=..,p=..$salt$hash with the cost it was given', async () => {
    const hash = await hashPassword('correct horse battery', { logN: 11, r: 4, p: 2 });
    const { cost, salt, key } = partsOf(hash);
    assert.deepEqual(cost, { logN: 11, r: 4, p: 2 });
    assert.equal(salt.length, 16);
    assert.ok(key.length >= 32, `derived key of ${key.length} bytes`);
    assert.ok(!hash.includes('correct horse battery'));
  });

  test('two hashes of the same password differ (fresh salt each time)', async () => {
    const first = await hashPassword('correct horse battery', FAST);
    const second = await hashPassword('correct horse battery', FAST);
    assert.notEqual(first, second);
    assert.notDeepEqual(partsOf(first).salt, partsOf(second).salt);
  });

  test('a hash verifies with scrypt-js using the cost, salt and length it carries (NFC UTF-8 password)', async () => {
    // "café ünïcode" written with combining marks (NFD): the hash must be of its NFC UTF-8 bytes.
    const decomposed = 'cafe\u0301 u\u0308ni\u0308code';
    const hash = await hashPassword(decomposed, FAST);
    const { cost, salt, key } = partsOf(hash);
    const expected = await scryptJs.scrypt(
      Buffer.from(decomposed.normalize('NFC'), 'utf8'),
      salt,
      2 ** cost.logN,
      cost.r,
      cost.p,
      key.length,
    );
    assert.deepEqual(Buffer.from(expected), key);
  });
});

describe('verifyPassword', () => {
  test('true for the password, false for any other', async () => {
    const hash = await hashPassword('correct horse battery', FAST);
    assert.equal(await verifyPassword('correct horse battery', hash), true);
    assert.equal(await verifyPassword('correct horse batterY', hash), false);
    assert.equal(await verifyPassword('', hash), false);
  });

  test('uses the cost stored in the hash, not a current default', async () => {
    const hash = await hashPassword('correct horse battery', { logN: 12, r: 2, p: 2 });
    assert.equal(await verifyPassword('correct horse battery', hash), true);
  });

  test('the composed and decomposed spellings of a password are the same password', async () => {
    const hash = await hashPassword('cafe\u0301', FAST);
    assert.equal(await verifyPassword('caf\u00e9', hash), true);
  });

  test('a hash made by scrypt-js in the same format verifies', async () => {
    const salt = Buffer.from('0123456789abcdef');
    const key = await scryptJs.scrypt(Buffer.from('correct horse battery', 'utf8'), salt, 2 ** 10, 8, 1, 32);
    const hash = `$scrypt$ln=10,r=8,p=1$${salt.toString('base64')}$${Buffer.from(key).toString('base64')}`;
    assert.equal(await verifyPassword('correct horse battery', hash), true);
    assert.equal(await verifyPassword('wrong horse battery', hash), false);
  });

  test('a stored string that is not a hash never matches (and does not throw)', async () => {
    for (const stored of ['', 'correct horse battery', '$scrypt$ln=10,r=8,p=1$', '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA']) {
      assert.equal(await verifyPassword('correct horse battery', stored), false, stored);
    }
  });
});

describe('PasswordHasher', () => {
  /** A hasher whose every hash is held until `release()`; until it has measured its own pace, it counts 200 ms a hash. */
  function heldHasher(options: { maxWaitMs?: number; maxQueueWaitMs?: number; queueMax?: number }) {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    return { hasher: new PasswordHasher({ concurrency: 1, queueMax: 20, ...options, beforeHash: () => held }), release };
  }
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error as ApiError,
    );

  test('refuses at once (503, Retry-After) a hash that other addresses would make take longer than maxWaitMs, though the queue has room', async () => {
    const { hasher, release } = heldHasher({ maxWaitMs: 500 });
    const running = hasher.hash('the first', FAST, { key: '192.0.2.1' }); // holds the only slot
    const waiting = hasher.hash('the second', FAST, { key: '192.0.2.2' }); // one hash ahead, then its own: about 400 ms, within 500
    const started = performance.now();
    const refused = await refusal(hasher.hash('the third', FAST, { key: '192.0.2.3' }));
    assert.ok(refused instanceof ApiError, 'two hashes of other addresses ahead, then its own, about 600 ms: refused');
    assert.equal(refused.status, 503);
    assert.ok(refused.retryAfterSeconds !== undefined && refused.retryAfterSeconds >= 1);
    assert.ok(performance.now() - started < 100, 'without waiting');
    release();
    assert.match(await running, /^\$scrypt\$/);
    assert.match(await waiting, /^\$scrypt\$/);
  });

  test('a burst from one address waits for its own hashes up to maxQueueWaitMs, not maxWaitMs', async () => {
    const { hasher, release } = heldHasher({ maxWaitMs: 700, maxQueueWaitMs: 2_100 });
    // At 200 ms a hash, the tenth waits for nine, then its own: 2,000 ms; the eleventh 2,200 ms.
    const burst = Array.from({ length: 10 }, (_, i) => hasher.hash(`burst ${i}`, FAST, { key: '192.0.2.1' }));
    const refused = await refusal(hasher.hash('one too many', FAST, { key: '192.0.2.1' }));
    assert.ok(refused instanceof ApiError && refused.status === 503, 'beyond maxQueueWaitMs: refused');
    // Another address waits for one turn of the burst's address (then its own hash: 600 ms), not for the whole burst.
    const other = hasher.hash('another address', FAST, { key: '192.0.2.2' });
    release();
    for (const hash of [...burst, other]) assert.match(await hash, /^\$scrypt\$/);
  });
});
