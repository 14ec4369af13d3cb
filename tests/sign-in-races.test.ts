// Sign-in and the account under races and floods. Other requests run while a password hash is
// computed; these tests hold hashes mid-way (the app's beforeHash hook) to make each race happen
// every time, instead of hoping a sleep lands in the right place.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorOf, startService, type Reply } from './helpers.js';

/** Holds chosen password hashes, right before scrypt runs, until released. */
class HashGate {
  /** Every password a hash was asked for, in order. */
  readonly hashed: string[] = [];
  /** Every password whose hash had to wait for a slot, in order. */
  readonly waited: string[] = [];
  readonly onWait = (password: string): void => {
    this.waited.push(password);
  };
  private holds: { match: (password: string) => boolean; reached: () => void }[] = [];
  private holdAll = false;
  private released: Promise<void> = Promise.resolve();
  private release_: () => void = () => {};
  /** How many hashes are being held now. */
  held = 0;

  readonly beforeHash = async (password: string): Promise<void> => {
    this.hashed.push(password);
    const index = this.holds.findIndex((hold) => hold.match(password));
    if (index === -1 && !this.holdAll) return;
    if (index !== -1) this.holds.splice(index, 1)[0].reached();
    this.held += 1;
    await this.released;
    this.held -= 1;
  };

  /** Holds the next hash of a password `match` accepts; resolves once it is held. */
  holdNext(match: (password: string) => boolean): Promise<void> {
    this.close();
    return new Promise((reached) => this.holds.push({ match, reached }));
  }

  /** Holds every hash from now on until release(). */
  holdEverything(): void {
    this.close();
    this.holdAll = true;
  }

  /** Lets every held hash run. */
  release(): void {
    this.holdAll = false;
    this.release_();
  }

  private close(): void {
    if (this.held > 0 || this.holds.length > 0 || this.holdAll) return;
    this.released = new Promise((resolve) => (this.release_ = resolve));
  }
}

/** Resolves when `check` is true, polling; rejects after `ms`. */
async function eventually(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** `promise`, or a rejection after `ms` (so a request that waits where it should not fails fast). */
function within<T>(promise: Promise<T>, ms = 2000): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))]);
}

const signInPath = '/api/v1/auth/sign-in';

describe('sign-in racing changes to the account', () => {
  const gate = new HashGate();
  const servicePromise = startService({}, undefined, { beforeHash: gate.beforeHash });

  test('a sign-in checked against the old password while the password changes gets 401 and no token', async () => {
    const service = await servicePromise;
    const { token, email, password, user } = await service.signUp();
    const held = gate.holdNext((given) => given === password);
    const signIn = service.request('POST', signInPath, { body: { email, password } });
    await held;
    const change = await service.request('PATCH', '/api/v1/auth/me', {
      token,
      body: { password: 'a brand new password', currentPassword: password },
    });
    assert.equal(change.status, 200, JSON.stringify(change.body));
    gate.release();
    const reply = await signIn;
    assert.equal(reply.status, 401, JSON.stringify(reply.body));
    assert.equal(errorOf(reply).code, 'unauthorized');
    const tokens = service.db.prepare('SELECT count(*) FROM api_tokens WHERE user_id = ?').pluck().get(user.id);
    assert.equal(tokens, 1, 'only the token that changed the password is left');
    // The new password signs in as usual.
    assert.equal((await service.request('POST', signInPath, { body: { email, password: 'a brand new password' } })).status, 200);
  });

  test('a sign-in checked while the account is deleted gets 401 like an unknown account, not 500', async () => {
    const service = await servicePromise;
    const { token, email, password } = await service.signUp();
    const held = gate.holdNext((given) => given === password);
    const signIn = service.request('POST', signInPath, { body: { email, password } });
    await held;
    const removal = await service.request('DELETE', '/api/v1/auth/me', { token, body: { password } });
    assert.equal(removal.status, 200, JSON.stringify(removal.body));
    gate.release();
    const reply = await signIn;
    assert.equal(reply.status, 401, JSON.stringify(reply.body));
    const unknown = await service.request('POST', signInPath, { body: { email, password } });
    assert.deepEqual(errorOf(reply), errorOf(unknown), 'the same answer as an unknown email');
  });

  test('a name change checked while the account is deleted gets 401, not 500', async () => {
    // The name-only PATCH awaits nothing, so it cannot interleave; a password change can.
    const service = await servicePromise;
    const { token, password } = await service.signUp();
    const other = (await service.request('POST', '/api/v1/api-tokens', { token, body: {} })).body.data.token;
    const held = gate.holdNext((given) => given === 'a changed password');
    const change = service.request('PATCH', '/api/v1/auth/me', {
      token: other,
      body: { name: 'New', password: 'a changed password', currentPassword: password },
    });
    await held;
    assert.equal((await service.request('DELETE', '/api/v1/auth/me', { token, body: { password } })).status, 200);
    gate.release();
    const reply: Reply = await change;
    assert.equal(reply.status, 401, JSON.stringify(reply.body));
  });

  test('a rename made while a password change is hashed stays: the change writes only the password', async () => {
    const service = await servicePromise;
    const { token, email, password } = await service.signUp('Original');
    const held = gate.holdNext((given) => given === 'a password of its own');
    const change = service.request('PATCH', '/api/v1/auth/me', {
      token,
      body: { password: 'a password of its own', currentPassword: password },
    });
    await held;
    const rename = await service.request('PATCH', '/api/v1/auth/me', { token, body: { name: 'Renamed' } });
    assert.equal(rename.status, 200, JSON.stringify(rename.body));
    assert.equal(rename.body.data.name, 'Renamed');
    gate.release();
    const changed = await change;
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(changed.body.data.name, 'Renamed', 'the answer shows the account as it now is');
    assert.equal((await service.request('GET', '/api/v1/auth/me', { token })).body.data.name, 'Renamed');
    assert.equal((await service.request('POST', signInPath, { body: { email, password: 'a password of its own' } })).status, 200);
  });

  test('two password changes through one token at once: the one checked against a password no longer current is 403', async () => {
    const service = await servicePromise;
    const { token, email, password } = await service.signUp();
    const held = gate.holdNext((given) => given === 'the first new password');
    const first = service.request('PATCH', '/api/v1/auth/me', {
      token,
      body: { password: 'the first new password', currentPassword: password },
    });
    await held;
    const second = await service.request('PATCH', '/api/v1/auth/me', {
      token,
      body: { password: 'the second new password', currentPassword: password },
    });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    gate.release();
    const reply = await first;
    assert.equal(reply.status, 403, JSON.stringify(reply.body));
    assert.equal(errorOf(reply).code, 'forbidden');
    assert.equal((await service.request('POST', signInPath, { body: { email, password: 'the second new password' } })).status, 200);
    assert.equal((await service.request('POST', signInPath, { body: { email, password: 'the first new password' } })).status, 401);
  });
});

describe('the failed sign-in allowance of an email', () => {
  const limits = { enabled: true, authPerMinute: 1000, failedSignInsPer15Minutes: 5, perTokenPerMinute: 6000 };

  test('parallel wrong guesses: each holds its place while hashed, so only the allowance is checked', async () => {
    const gate = new HashGate();
    const service = await startService({ rateLimit: limits }, undefined, { beforeHash: gate.beforeHash });
    const { email } = await service.signUp();
    gate.holdEverything();
    const replies: Reply[] = [];
    const guesses = Array.from({ length: 30 }, (_, i) =>
      service.request('POST', signInPath, { body: { email, password: `guess number ${i}` } }).then((reply) => replies.push(reply)),
    );
    // The guesses beyond the allowance are answered while the others are still being hashed.
    await eventually(() => replies.length >= 30 - limits.failedSignInsPer15Minutes, 2000).catch(() => {});
    const answeredWhileHeld = replies.length;
    gate.release();
    await Promise.all(guesses);
    const statuses = replies.map((reply) => reply.status);
    assert.equal(statuses.filter((status) => status === 401).length, limits.failedSignInsPer15Minutes, String(statuses));
    assert.equal(statuses.filter((status) => status === 429).length, 30 - limits.failedSignInsPer15Minutes, String(statuses));
    assert.equal(answeredWhileHeld, 30 - limits.failedSignInsPer15Minutes, 'the refusals did not wait for the hashes');
    assert.equal(gate.hashed.filter((password) => password.startsWith('guess')).length, limits.failedSignInsPer15Minutes);
  });

  test('a known email is not enough to lock its owner out: another address with the right password signs in', async () => {
    const service = await startService({ rateLimit: limits, trustProxy: true });
    const { email, password } = await service.signUp();
    const from = (address: string, given: string) =>
      service.request('POST', signInPath, { body: { email, password: given }, headers: { 'X-Forwarded-For': address } });
    for (let i = 0; i < limits.failedSignInsPer15Minutes; i += 1) assert.equal((await from('198.51.100.1', `guess ${i}`)).status, 401);
    // The guessing address waits, even with the right password: it cannot learn it is right.
    assert.equal((await from('198.51.100.1', password)).status, 429);
    assert.equal((await from('198.51.100.1', 'guess again')).status, 429);
    // The owner, from an address that has not failed for this email, signs in.
    assert.equal((await from('203.0.113.7', password)).status, 200);
    assert.equal((await from('203.0.113.7', password)).status, 200, 'and again');
    // The email stays locked for the guessing address: the owner's sign-in does not reset it.
    assert.equal((await from('198.51.100.1', 'guess 99')).status, 429);
    // Another address gets one check while the email is locked: once it fails, it waits too.
    assert.equal((await from('192.0.2.55', 'wrong once')).status, 401);
    assert.equal((await from('192.0.2.55', password)).status, 429);
  });

  test("the owner's right password checks (PATCH /auth/me) never lock them out of changing it again or of sign-in", async () => {
    const service = await startService({ rateLimit: limits });
    const { token, email, password } = await service.signUp();
    let current = password;
    const statuses: number[] = [];
    // Past the email's allowance: every check counts against it, but a right one is no failure.
    for (let i = 1; i <= limits.failedSignInsPer15Minutes + 3; i += 1) {
      const next = `changed password ${i}`;
      const reply = await service.request('PATCH', '/api/v1/auth/me', { token, body: { password: next, currentPassword: current } });
      statuses.push(reply.status);
      if (reply.status === 200) current = next;
    }
    assert.deepEqual(statuses, Array(limits.failedSignInsPer15Minutes + 3).fill(200));
    const signIn = await service.request('POST', signInPath, { body: { email, password: current } });
    assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
    // A wrong guess from this address still counts: after it, the locked email makes it wait.
    const wrong = await service.request('PATCH', '/api/v1/auth/me', {
      token,
      body: { password: 'x'.repeat(12), currentPassword: 'a guess' },
    });
    assert.equal(wrong.status, 403);
    assert.equal((await service.request('POST', signInPath, { body: { email, password: current } })).status, 429);
  });

  test('while the email is locked, an address that has not failed gets one check at a time', async () => {
    const gate = new HashGate();
    const service = await startService({ rateLimit: limits, trustProxy: true }, undefined, { beforeHash: gate.beforeHash });
    const { email, password } = await service.signUp();
    const from = (address: string, given: string) =>
      service.request('POST', signInPath, { body: { email, password: given }, headers: { 'X-Forwarded-For': address } });
    for (let i = 0; i < limits.failedSignInsPer15Minutes; i += 1) assert.equal((await from('198.51.100.1', `guess ${i}`)).status, 401);
    gate.holdEverything();
    const parallel = Array.from({ length: 10 }, (_, i) => from('192.0.2.10', i === 0 ? password : `parallel ${i}`));
    const refused: number[] = [];
    for (const reply of parallel) reply.then((r) => refused.push(r.status));
    await eventually(() => refused.length >= 9, 2000).catch(() => {});
    gate.release();
    const statuses = (await Promise.all(parallel)).map((reply) => reply.status);
    assert.equal(statuses.filter((status) => status === 429).length, 9, String(statuses));
  });
});

describe('the password-hash queue', () => {
  test('beyond HASH_QUEUE_MAX waiting hashes, sign-in and sign-up answer 503 with Retry-After at once', async () => {
    const gate = new HashGate();
    const service = await startService({ hashConcurrency: 1, hashQueueMax: 2 }, undefined, { beforeHash: gate.beforeHash });
    const { email, password } = await service.signUp();
    gate.holdEverything();
    // One hash runs (held), two wait: the other three requests are refused without waiting.
    const replies: Reply[] = [];
    const flood = [
      ...Array.from({ length: 5 }, (_, i) => service.request('POST', signInPath, { body: { email, password: `flood ${i}` } })),
      service.request('POST', '/api/v1/auth/sign-up', { body: { name: 'Late', email: 'late@example.com', password: 'a good password' } }),
    ];
    for (const reply of flood) reply.then((r) => replies.push(r));
    await eventually(() => replies.length >= 3, 2000).catch(() => {});
    const refusedWhileHeld = replies.filter((reply) => reply.status === 503);
    assert.equal(refusedWhileHeld.length, 3, `answered while the hashes were held: ${replies.map((reply) => reply.status)}`);
    for (const reply of refusedWhileHeld) {
      assert.equal(errorOf(reply).code, 'unavailable');
      assert.match(reply.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    }
    gate.release();
    const statuses = (await Promise.all(flood)).map((reply) => reply.status).sort();
    assert.equal(statuses.filter((status) => status === 503).length, 3, String(statuses));
    // Once the queue drains, sign-in works again.
    assert.equal((await service.request('POST', signInPath, { body: { email, password } })).status, 200);
  });

  test('a 503 does not count as a failed sign-in', async () => {
    const gate = new HashGate();
    const limits = { enabled: true, authPerMinute: 1000, failedSignInsPer15Minutes: 2, perTokenPerMinute: 6000 };
    const service = await startService({ hashConcurrency: 1, hashQueueMax: 0, rateLimit: limits }, undefined, {
      beforeHash: gate.beforeHash,
    });
    const { email, password } = await service.signUp();
    gate.holdEverything();
    const held = service.request('POST', signInPath, { body: { email: 'someone.else@example.com', password: 'whatever it is' } });
    await eventually(() => gate.held === 1);
    for (let i = 0; i < 5; i += 1)
      assert.equal((await within(service.request('POST', signInPath, { body: { email, password } }))).status, 503);
    gate.release();
    await held;
    assert.equal((await service.request('POST', signInPath, { body: { email, password } })).status, 200);
  });

  test('during a flood of wrong guesses, a sign-in from an address that has not failed goes ahead of them', async () => {
    const gate = new HashGate();
    const limits = { enabled: true, authPerMinute: 1000, failedSignInsPer15Minutes: 1000, perTokenPerMinute: 6000 };
    const service = await startService({ hashConcurrency: 1, hashQueueMax: 5, rateLimit: limits, trustProxy: true }, undefined, {
      beforeHash: gate.beforeHash,
      onHashWait: gate.onWait,
    });
    const { email, password } = await service.signUp();
    const from = (address: string, given: string) =>
      service.request('POST', signInPath, { body: { email, password: given }, headers: { 'X-Forwarded-For': address } });
    // The flooding addresses have each guessed wrong once.
    for (let i = 0; i < 4; i += 1) assert.equal((await from(`198.51.100.${i}`, 'wrong')).status, 401);
    gate.holdEverything();
    const start = gate.hashed.length;
    const replies: Reply[] = [];
    const flood = Array.from({ length: 8 }, (_, i) => from(`198.51.100.${i % 4}`, `flood ${i}`));
    for (const reply of flood) reply.then((r) => replies.push(r));
    // One guess runs (held), five wait: the queue is full for them, so two are refused.
    await eventually(() => replies.length >= 2);
    assert.deepEqual(
      replies.map((reply) => reply.status),
      [503, 503],
    );
    const real = from('203.0.113.9', password);
    // Released only once the real sign-in waits in its line (released before, the next guess in line
    // ran first whenever the request had not reached the hasher yet).
    await eventually(() => gate.waited.includes(password));
    assert.equal(gate.hashed.length, start + 1);
    gate.release();
    const reply = await real;
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    await Promise.all(flood);
    assert.equal(
      gate.hashed[start + 1],
      password,
      `the real sign-in was hashed right after the running guess: ${gate.hashed.slice(start)}`,
    );
  });
});

describe('a burst of sign-ups from one address', () => {
  // The service's own limits: 30 sign-up/sign-in attempts per address a minute, the default hash queue.
  const limits = { enabled: true, authPerMinute: 30, failedSignInsPer15Minutes: 10, perTokenPerMinute: 6000 };
  const signUpPath = '/api/v1/auth/sign-up';

  test('30 sign-ups of distinct users at once, as an integration test makes them: every one 201, each its own account', async () => {
    const gate = new HashGate();
    const service = await startService({ rateLimit: limits }, undefined, { beforeHash: gate.beforeHash, onHashWait: gate.onWait });
    // Every hash held until all 30 have been answered or wait for a hash: the burst is all there at once.
    gate.holdEverything();
    const replies: Reply[] = [];
    const burst = Array.from({ length: 30 }, (_, i) =>
      service.request('POST', signUpPath, { body: { email: `burst-${i}@example.com`, password: `a good password ${i}` } }).then((reply) => {
        replies.push(reply);
        return reply;
      }),
    );
    await eventually(() => replies.length + gate.held + gate.waited.length >= 30);
    gate.release();
    const answers = await Promise.all(burst);
    assert.deepEqual(
      answers.map((reply) => reply.status),
      Array(30).fill(201),
      answers.map((reply) => JSON.stringify(reply.body)).join('\n'),
    );
    answers.forEach((reply, i) => assert.equal(reply.body.data.user.email, `burst-${i}@example.com`));
    const stored = service.db.prepare("SELECT email FROM users WHERE email LIKE 'burst-%' ORDER BY email").pluck().all();
    assert.deepEqual(stored, Array.from({ length: 30 }, (_, i) => `burst-${i}@example.com`).sort());
  });

  test('20 sign-ups of one email at once: one 201, nineteen 409, and the password is hashed once', async () => {
    const gate = new HashGate();
    const service = await startService({ rateLimit: limits }, undefined, { beforeHash: gate.beforeHash, onHashWait: gate.onWait });
    const body = { email: 'twenty@example.com', password: 'the same good password' };
    gate.holdEverything();
    const replies: Reply[] = [];
    const burst = Array.from({ length: 20 }, () => service.request('POST', signUpPath, { body }).then((reply) => replies.push(reply)));
    // The first sign-up's hash is held; the others wait for its outcome instead of hashing, so this
    // is not reached: a second is given to arrive, and they are released.
    await eventually(() => replies.length + gate.held + gate.waited.length >= 20, 1000).catch(() => {});
    gate.release();
    await Promise.all(burst);
    const statuses = replies.map((reply) => reply.status).sort();
    assert.deepEqual(statuses, [201, ...Array(19).fill(409)], replies.map((reply) => JSON.stringify(reply.body)).join('\n'));
    for (const reply of replies.filter((r) => r.status === 409)) assert.equal(errorOf(reply).code, 'conflict');
    assert.equal(gate.hashed.filter((password) => password === body.password).length, 1, 'the duplicates were found before hashing');
  });

  test("another address's sign-in waits for one turn of the burst, not for the whole of it", async () => {
    const gate = new HashGate();
    const service = await startService({ rateLimit: limits, trustProxy: true }, undefined, {
      beforeHash: gate.beforeHash,
      onHashWait: gate.onWait,
    });
    const { email, password } = await service.signUp();
    gate.holdEverything();
    const start = gate.hashed.length;
    const burst = Array.from({ length: 20 }, (_, i) =>
      service.request('POST', signUpPath, {
        body: { email: `fair-${i}@example.com`, password: `burst password ${i}` },
        headers: { 'X-Forwarded-For': '198.51.100.1' },
      }),
    );
    await eventually(() => gate.held + gate.waited.length >= 20);
    const real = service.request('POST', signInPath, { body: { email, password }, headers: { 'X-Forwarded-For': '203.0.113.9' } });
    await eventually(() => gate.waited.includes(password));
    gate.release();
    assert.equal((await real).status, 200);
    assert.deepEqual(
      (await Promise.all(burst)).map((reply) => reply.status),
      Array(20).fill(201),
    );
    // Two of the burst were running (held), one more took its turn, then the sign-in.
    assert.equal(gate.hashed.lastIndexOf(password), start + 3, `hashed in this order: ${gate.hashed.slice(start)}`);
  });
});
