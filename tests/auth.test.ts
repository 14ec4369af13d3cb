// Sign-up as original clients call it, sign-in, and the caller's own account.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorOf, startService, TIMESTAMP, type Json } from './helpers.js';
import { createUserAdminStore } from '../src/users/admin-store.js';

const service = await startService();
const { request } = service;

let emailCounter = 0;
/** An email address no other test uses. */
function freshEmail(local = 'someone'): string {
  emailCounter += 1;
  return `${local}.${emailCounter}.${Date.now()}@example.com`;
}

/** The paths named in a 422's details. */
function pathsOf(reply: Awaited<ReturnType<typeof request>>): string[] {
  const error = errorOf(reply);
  assert.equal(reply.status, 422);
  assert.equal(error.code, 'validation_failed');
  assert.ok(Array.isArray(error.details), 'a 422 lists its bad fields in details');
  return error.details!.map((issue) => issue.path).sort();
}

/** The id of the API token record holding `token`, read from the database. */
function tokenIdOf(token: string): string {
  const id = service.db.prepare('SELECT id FROM api_tokens WHERE token = ?').pluck().get(token);
  assert.equal(typeof id, 'string');
  return id as string;
}

describe('POST /auth/sign-up', () => {
  test('201 with the user: password hash, timestamps and null related fields', async () => {
    const email = freshEmail('ada');
    const reply = await request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Ada Lovelace', email, password: 'correct horse battery' },
    });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.success, true);
    const { user } = reply.body.data;
    assert.equal(typeof user.id, 'string');
    assert.ok(user.id.length > 0);
    assert.equal(user.email, email);
    assert.equal(user.name, 'Ada Lovelace');
    assert.match(user.password, /^\$scrypt\$/);
    assert.ok(!user.password.includes('correct horse battery'));
    assert.match(user.createdAt, TIMESTAMP);
    assert.match(user.updatedAt, TIMESTAMP);
    assert.equal(user.deletedAt, null);
    assert.equal(user.profile, null);
    assert.equal(user.Agent, null);
    assert.equal(user.ApiToken, null);
    assert.equal(user.Document, null);
  });

  test('the email is trimmed and lower-cased', async () => {
    const email = freshEmail('grace');
    const reply = await request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Grace', email: `  ${email.toUpperCase()}  `, password: 'correct horse battery' },
    });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.data.user.email, email);
  });

  test('the same email again, in any case, is 409 conflict', async () => {
    const email = freshEmail('dup');
    const first = await request('POST', '/api/v1/auth/sign-up', { body: { name: 'One', email, password: 'correct horse battery' } });
    assert.equal(first.status, 201);
    for (const again of [email, email.toUpperCase(), ` ${email.replace('dup', 'DUP')} `]) {
      const reply = await request('POST', '/api/v1/auth/sign-up', { body: { name: 'Two', email: again, password: 'another password' } });
      assert.equal(reply.status, 409, again);
      assert.equal(errorOf(reply).code, 'conflict');
    }
  });

  test('missing fields are 422 validation_failed naming each', async () => {
    const reply = await request('POST', '/api/v1/auth/sign-up', { body: {} });
    assert.deepEqual(pathsOf(reply), ['email', 'password']);
  });

  test('name is optional: the part of the email before "@"', async () => {
    const reply = await request('POST', '/api/v1/auth/sign-up', {
      body: { email: 'Nameless.One@example.com', password: 'long enough pw' },
    });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.equal(reply.body.data.user.name, 'nameless.one');
  });

  test('invalid fields are 422 naming each', async () => {
    const reply = await request('POST', '/api/v1/auth/sign-up', {
      body: { name: '   ', email: 'not-an-email', password: 12345678 },
    });
    assert.deepEqual(pathsOf(reply), ['email', 'name', 'password']);
  });

  test('a password shorter than 8 characters is 422; exactly 8 is fine', async () => {
    const short = await request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Short', email: freshEmail(), password: 'seven77' },
    });
    assert.deepEqual(pathsOf(short), ['password']);
    const eight = await request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Eight', email: freshEmail(), password: 'eight888' },
    });
    assert.equal(eight.status, 201);
  });

  test('a password longer than 1024 characters is 422', async () => {
    const reply = await request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Long', email: freshEmail(), password: 'x'.repeat(1025) },
    });
    assert.deepEqual(pathsOf(reply), ['password']);
  });
});

describe('POST /auth/sign-in', () => {
  test('200 with the user (no password) and a bearer token', async () => {
    const { email, password, user } = await service.signUp('Signer');
    const reply = await request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.equal(reply.body.data.user.id, user.id);
    assert.equal(reply.body.data.user.email, email);
    assert.equal(reply.body.data.user.name, 'Signer');
    assert.ok(!('password' in reply.body.data.user), 'sign-in never returns the hash');
    assert.match(reply.body.data.token, /^ams_/);
    const me = await request('GET', '/api/v1/auth/me', { token: reply.body.data.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, user.id);
  });

  test('the email is compared trimmed and case-insensitively', async () => {
    const { email, password } = await service.signUp();
    const reply = await request('POST', '/api/v1/auth/sign-in', { body: { email: ` ${email.toUpperCase()} `, password } });
    assert.equal(reply.status, 200);
  });

  test('the token is an ordinary API token saying it came from sign-in, with an expiry', async () => {
    const { token } = await service.signUp();
    const list = await request('GET', '/api/v1/api-tokens', { token });
    assert.equal(list.status, 200);
    const record = list.body.data.find((item: { token: string }) => item.token === token);
    assert.ok(record, 'the sign-in token is listed');
    assert.match(record.description, /sign[- ]?in/i);
    assert.match(record.expiresAt, TIMESTAMP);
    assert.ok(Date.parse(record.expiresAt) > Date.now());
  });

  test('wrong password and unknown email get the same 401', async () => {
    const { email } = await service.signUp();
    const wrongPassword = await request('POST', '/api/v1/auth/sign-in', { body: { email, password: 'not the password' } });
    const unknownEmail = await request('POST', '/api/v1/auth/sign-in', {
      body: { email: freshEmail('nobody'), password: 'not the password' },
    });
    assert.equal(wrongPassword.status, 401);
    assert.equal(errorOf(wrongPassword).code, 'unauthorized');
    assert.equal(unknownEmail.status, 401);
    assert.deepEqual(unknownEmail.body, wrongPassword.body);
  });

  test('missing fields are 422', async () => {
    const reply = await request('POST', '/api/v1/auth/sign-in', { body: {} });
    assert.deepEqual(pathsOf(reply), ['email', 'password']);
  });
});

describe('GET /auth/me', () => {
  test('the caller, without the password, with either header spelling', async () => {
    const { token, user, email } = await service.signUp('Me Myself');
    for (const header of ['Autorization', 'Authorization'] as const) {
      const reply = await request('GET', '/api/v1/auth/me', { token, header });
      assert.equal(reply.status, 200, header);
      assert.equal(reply.body.success, true);
      assert.equal(reply.body.data.id, user.id);
      assert.equal(reply.body.data.email, email);
      assert.equal(reply.body.data.name, 'Me Myself');
      assert.match(reply.body.data.createdAt, TIMESTAMP);
      assert.ok(!('password' in reply.body.data), 'never the hash');
    }
  });

  test('the scheme word is case-insensitive and white space around the parts is ignored', async () => {
    const { token, user } = await service.signUp();
    for (const value of [`bearer ${token}`, `BEARER ${token}`, `  bEaReR   ${token}  `, `\tBearer\t${token}\t`]) {
      for (const name of ['Autorization', 'Authorization']) {
        const reply = await request('GET', '/api/v1/auth/me', { headers: { [name]: value } });
        assert.equal(reply.status, 200, `${name}: ${JSON.stringify(value)}`);
        assert.equal(reply.body.data.id, user.id);
      }
    }
  });

  test('no credential is 401', async () => {
    const reply = await request('GET', '/api/v1/auth/me');
    assert.equal(reply.status, 401);
    assert.equal(errorOf(reply).code, 'unauthorized');
  });

  test('an unknown token, or a token without the Bearer scheme, is 401', async () => {
    const { token } = await service.signUp();
    const attempts: Record<string, string>[] = [
      { Autorization: 'Bearer ams_unknownunknownunknownunknownunknownunknown' },
      { Autorization: token },
      { Authorization: `Basic ${token}` },
      { Autorization: 'Bearer' },
    ];
    for (const headers of attempts) {
      const reply = await request('GET', '/api/v1/auth/me', { headers });
      assert.equal(reply.status, 401, JSON.stringify(headers));
      assert.equal(errorOf(reply).code, 'unauthorized');
    }
  });

  test('an expired token is 401', async () => {
    const { token } = await service.signUp();
    assert.equal((await request('GET', '/api/v1/auth/me', { token })).status, 200);
    service.db.prepare('UPDATE api_tokens SET expires_at = ? WHERE id = ?').run('2000-01-01T00:00:00.000000+00:00', tokenIdOf(token));
    const reply = await request('GET', '/api/v1/auth/me', { token });
    assert.equal(reply.status, 401);
    assert.equal(errorOf(reply).code, 'unauthorized');
  });
});

describe('PATCH /auth/me', () => {
  test('changes the name', async () => {
    const { token, user } = await service.signUp('Old Name');
    const before = await request('GET', '/api/v1/auth/me', { token });
    const reply = await request('PATCH', '/api/v1/auth/me', { token, body: { name: '  New Name  ' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.data.id, user.id);
    assert.equal(reply.body.data.name, 'New Name');
    assert.ok(!('password' in reply.body.data));
    assert.notEqual(reply.body.data.updatedAt, before.body.data.updatedAt);
    const after = await request('GET', '/api/v1/auth/me', { token });
    assert.equal(after.body.data.name, 'New Name');
  });

  test('a new password without currentPassword is 422', async () => {
    const { token } = await service.signUp();
    const reply = await request('PATCH', '/api/v1/auth/me', { token, body: { password: 'a brand new password' } });
    assert.deepEqual(pathsOf(reply), ['currentPassword']);
  });

  test('a new password shorter than 8 characters is 422', async () => {
    const { token, password } = await service.signUp();
    const reply = await request('PATCH', '/api/v1/auth/me', { token, body: { password: 'short', currentPassword: password } });
    assert.deepEqual(pathsOf(reply), ['password']);
  });

  test('a wrong currentPassword is 403 forbidden and changes nothing', async () => {
    const { token, email, password } = await service.signUp();
    const reply = await request('PATCH', '/api/v1/auth/me', {
      token,
      body: { password: 'a brand new password', currentPassword: 'not the password' },
    });
    assert.equal(reply.status, 403);
    assert.equal(errorOf(reply).code, 'forbidden');
    const signIn = await request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
    assert.equal(signIn.status, 200);
  });

  test('a password change keeps the calling token and revokes every other token of the user', async () => {
    const { token: calling, email, password } = await service.signUp();
    const created = await request('POST', '/api/v1/api-tokens', { token: calling, body: { description: 'ci' } });
    assert.equal(created.status, 201);
    const other = created.body.data.token as string;
    const secondSignIn = await request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
    const another = secondSignIn.body.data.token as string;
    const bystander = await service.signUp();

    const reply = await request('PATCH', '/api/v1/auth/me', {
      token: calling,
      body: { password: 'a brand new password', currentPassword: password },
    });
    assert.equal(reply.status, 200);
    assert.ok(!('password' in reply.body.data));

    assert.equal((await request('GET', '/api/v1/auth/me', { token: calling })).status, 200);
    for (const revoked of [other, another]) {
      const rejected = await request('GET', '/api/v1/auth/me', { token: revoked });
      assert.equal(rejected.status, 401);
      assert.equal(errorOf(rejected).code, 'unauthorized');
    }
    const list = await request('GET', '/api/v1/api-tokens', { token: calling });
    assert.deepEqual(
      list.body.data.map((item: { token: string }) => item.token),
      [calling],
    );
    // Another user's tokens are untouched.
    assert.equal((await request('GET', '/api/v1/auth/me', { token: bystander.token })).status, 200);

    const oldPassword = await request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
    assert.equal(oldPassword.status, 401);
    const newPassword = await request('POST', '/api/v1/auth/sign-in', { body: { email, password: 'a brand new password' } });
    assert.equal(newPassword.status, 200);
  });

  test('without a token it is 401', async () => {
    const reply = await request('PATCH', '/api/v1/auth/me', { body: { name: 'Nobody' } });
    assert.equal(reply.status, 401);
  });
});

describe('DELETE /auth/me', () => {
  test('a wrong password is 403 and the account stays', async () => {
    const { token } = await service.signUp();
    const reply = await request('DELETE', '/api/v1/auth/me', { token, body: { password: 'not the password' } });
    assert.equal(reply.status, 403);
    assert.equal(errorOf(reply).code, 'forbidden');
    assert.equal((await request('GET', '/api/v1/auth/me', { token })).status, 200);
  });

  test('without a password it is 422', async () => {
    const { token } = await service.signUp();
    const reply = await request('DELETE', '/api/v1/auth/me', { token });
    assert.deepEqual(pathsOf(reply), ['password']);
  });

  test('the right password deletes the account and everything it owns', async () => {
    const { token, email, password, user } = await service.signUp();
    await request('POST', '/api/v1/api-tokens', { token, body: { description: 'second' } });
    const bystander = await service.signUp();

    const reply = await request('DELETE', '/api/v1/auth/me', { token, body: { password } });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { success: true, data: null });

    const me = await request('GET', '/api/v1/auth/me', { token });
    assert.equal(me.status, 401);
    const signIn = await request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
    assert.equal(signIn.status, 401);

    const count = (sql: string) => service.db.prepare(sql).pluck().get(user.id);
    assert.equal(count('SELECT COUNT(*) FROM users WHERE id = ?'), 0);
    assert.equal(count('SELECT COUNT(*) FROM api_tokens WHERE user_id = ?'), 0);
    assert.equal((await request('GET', '/api/v1/auth/me', { token: bystander.token })).status, 200);

    // The address is free again.
    const again = await request('POST', '/api/v1/auth/sign-up', { body: { name: 'Again', email, password } });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.data.user.id, user.id);
  });
});

describe('a disabled account', () => {
  // As the operator's user:disable and user:enable do.
  const admin = createUserAdminStore(service.db);

  test('its token is 401 saying the account is disabled; an unknown token still says unknown or revoked', async () => {
    const { user, token } = await service.signUp();
    assert.equal(admin.setUserDisabled(user.id, true), true);
    const refused = await request('GET', '/api/v1/auth/me', { token });
    assert.equal(refused.status, 401);
    assert.equal(errorOf(refused).code, 'unauthorized');
    assert.match(errorOf(refused).message, /account is disabled/);
    // Someone without the secret learns nothing: a made-up token of the same shape is just unknown.
    const unknown = await request('GET', '/api/v1/auth/me', { token: `${token.slice(0, -4)}abcd` });
    assert.equal(unknown.status, 401);
    assert.equal(errorOf(unknown).message, 'The API token is unknown or revoked.');
    assert.equal(admin.setUserDisabled(user.id, false), true);
    assert.equal((await request('GET', '/api/v1/auth/me', { token })).status, 200);
  });

  test('its listed agents leave the library (list and cursor) until it is enabled again', async () => {
    const owner = await service.signUp();
    const other = await service.signUp();
    const reader = await service.signUp();
    const listAgent = async (token: string, name: string) => {
      const reply = await request('POST', '/api/v1/agents', {
        token,
        body: { name, type: 'REACT', llm: { model: 'm', provider: 'openai' }, isListed: true },
      });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
      return reply.body.data.id as string;
    };
    const owners = [await listAgent(owner.token, 'Owner one'), await listAgent(owner.token, 'Owner two')];
    const others = [await listAgent(other.token, 'Other one')];
    /** Every id in the library, page by page (two at a time). */
    const library = async (): Promise<string[]> => {
      const ids: string[] = [];
      for (let after: string | undefined; ;) {
        const reply = await request('GET', `/api/v1/agents/library?limit=2${after ? `&after=${after}` : ''}`, { token: reader.token });
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        ids.push(...reply.body.data.map((agent: Json) => agent.id as string));
        if (reply.body.data.length < 2) return ids;
        after = ids.at(-1);
      }
    };
    const before = await library();
    for (const id of [...owners, ...others]) assert.ok(before.includes(id), id);

    admin.setUserDisabled(owner.user.id, true);
    const hidden = await library();
    for (const id of owners) assert.ok(!hidden.includes(id), `${id} of the disabled account is hidden`);
    for (const id of others) assert.ok(hidden.includes(id), id);
    assert.deepEqual(
      hidden,
      before.filter((id) => !owners.includes(id)),
      'nothing else changes',
    );
    // Its agent is no cursor either: the library does not know it.
    const cursor = await request('GET', `/api/v1/agents/library?after=${owners[0]}`, { token: reader.token });
    assert.notEqual(cursor.status, 200);
    assert.ok(cursor.status < 500);

    admin.setUserDisabled(owner.user.id, false);
    assert.deepEqual(await library(), before);
  });
});
