// src/config.ts: the environment is read once; a bad setting stops the boot, naming every bad one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, loadEnvFile } from '../src/config.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The message loadConfig throws for `env` (fails the test when it does not throw). */
function errorFor(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof Error);
    return error.message;
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  test('defaults: 127.0.0.1:3000, a database under data/, 1 MiB bodies, scrypt N=2^15 r=8 p=3', () => {
    const config = loadConfig({});
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 3000);
    assert.ok(config.databasePath.startsWith(resolve('data') + sep), config.databasePath);
    assert.equal(config.bodyLimitBytes, 1024 * 1024);
    assert.deepEqual(config.scrypt, { logN: 15, r: 8, p: 3 });
    assert.ok(config.signInTokenTtlMs > 0);
  });

  test('reads the settings it is given', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '0',
      DATABASE_PATH: '/tmp/x/service.db',
      SCRYPT_LOG_N: '16',
      SCRYPT_R: '8',
      SCRYPT_P: '4',
      BODY_LIMIT_BYTES: '2048',
      LOG_REQUESTS: 'off',
    });
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 0);
    assert.equal(config.databasePath, '/tmp/x/service.db');
    assert.deepEqual(config.scrypt, { logN: 16, r: 8, p: 4 });
    assert.equal(config.bodyLimitBytes, 2048);
    assert.equal(config.logRequests, false);
  });

  test('ignores variables that are not its settings', () => {
    assert.equal(loadConfig({ PATH: '/usr/bin', HOME: '/root' }).port, 3000);
  });

  for (const port of ['abc', '70000', '-1', '3000.5']) {
    test(`PORT=${port} is refused, naming PORT`, () => {
      assert.match(errorFor({ PORT: port }), /\bPORT\b/);
    });
  }

  test('a scrypt cost below N=2^15, r=8, p=3 is refused (production never goes below it)', () => {
    assert.match(errorFor({ SCRYPT_LOG_N: '14' }), /SCRYPT_LOG_N/);
    assert.match(errorFor({ SCRYPT_LOG_N: '10' }), /SCRYPT_LOG_N/);
    assert.match(errorFor({ SCRYPT_R: '4' }), /SCRYPT_R/);
    assert.match(errorFor({ SCRYPT_P: '1' }), /SCRYPT_P/);
  });

  test('HASH_QUEUE_MAX: 100 by default, 0 allowed (no waiting at all), not a negative or fraction', () => {
    assert.equal(loadConfig({}).hashQueueMax, 100);
    assert.equal(loadConfig({ HASH_QUEUE_MAX: '0' }).hashQueueMax, 0);
    assert.match(errorFor({ HASH_QUEUE_MAX: '-1' }), /HASH_QUEUE_MAX/);
    assert.match(errorFor({ HASH_QUEUE_MAX: '2.5' }), /HASH_QUEUE_MAX/);
  });

  test('PASSWORD_HASH_COST=test: the cheap hash N=2^10, r=8, p=1 with NODE_ENV test or development', () => {
    for (const nodeEnv of ['test', 'development']) {
      assert.deepEqual(loadConfig({ PASSWORD_HASH_COST: 'test', NODE_ENV: nodeEnv }).scrypt, { logN: 10, r: 8, p: 1 });
    }
    assert.deepEqual(loadConfig({ PASSWORD_HASH_COST: 'default', NODE_ENV: 'test' }).scrypt, { logN: 15, r: 8, p: 3 });
    assert.deepEqual(loadConfig({ NODE_ENV: 'test' }).scrypt, { logN: 15, r: 8, p: 3 }, 'the default cost unless asked');
  });

  test('PASSWORD_HASH_COST=test is refused in one line unless NODE_ENV is test or development', () => {
    for (const nodeEnv of [undefined, 'production', 'staging', 'TEST']) {
      const message = errorFor({ PASSWORD_HASH_COST: 'test', NODE_ENV: nodeEnv });
      assert.equal(message.split('\n').length, 1, message);
      assert.match(message, /^invalid configuration: PASSWORD_HASH_COST=test: .*refused unless NODE_ENV is test or development/);
      assert.match(message, nodeEnv ? new RegExp(`NODE_ENV=${nodeEnv}\\)$`) : /NODE_ENV is not set\)$/);
    }
    assert.match(
      errorFor({ PASSWORD_HASH_COST: 'cheap', NODE_ENV: 'test' }),
      /^invalid configuration: PASSWORD_HASH_COST=cheap: must be default or test$/,
    );
    // With other bad settings, it is listed among them.
    assert.match(errorFor({ PASSWORD_HASH_COST: 'test', PORT: 'abc' }), /\n {2}PORT=abc: .*\n {2}PASSWORD_HASH_COST=test: /);
  });

  test('every bad setting is named in one message', () => {
    const message = errorFor({ PORT: 'abc', SCRYPT_LOG_N: '10', BODY_LIMIT_BYTES: 'lots', LOG_REQUESTS: 'maybe' });
    for (const name of ['PORT', 'SCRYPT_LOG_N', 'BODY_LIMIT_BYTES', 'LOG_REQUESTS']) {
      assert.match(message, new RegExp(`\\b${name}\\b`), `${name} missing from: ${message}`);
    }
  });

  test('every boolean setting takes on/off, true/false, 1/0, yes/no in any case', () => {
    const booleans = {
      LOG_REQUESTS: (c: ReturnType<typeof loadConfig>) => c.logRequests,
      SIGN_UP: (c: ReturnType<typeof loadConfig>) => c.signUp,
      TRUST_PROXY: (c: ReturnType<typeof loadConfig>) => c.trustProxy,
      RATE_LIMIT: (c: ReturnType<typeof loadConfig>) => c.rateLimit.enabled,
      INGEST: (c: ReturnType<typeof loadConfig>) => c.ingestion.enabled,
      ALLOW_PRIVATE_NETWORKS: (c: ReturnType<typeof loadConfig>) => c.allowPrivateNetworks,
      LITESTREAM: (c: ReturnType<typeof loadConfig>) => c.litestream,
    };
    for (const [name, read] of Object.entries(booleans)) {
      for (const word of ['on', 'ON', 'true', 'True', '1', 'yes', 'YES', ' on '])
        assert.equal(read(loadConfig({ [name]: word })), true, `${name}=${word}`);
      for (const word of ['off', 'Off', 'false', 'FALSE', '0', 'no', 'No'])
        assert.equal(read(loadConfig({ [name]: word })), false, `${name}=${word}`);
      assert.match(errorFor({ [name]: 'maybe' }), new RegExp(`${name}=maybe: must be on or off`));
    }
    // Every boolean setting of config.ts is in the list above.
    const source = readFileSync(join(root, 'src', 'config.ts'), 'utf8');
    const declared = [...source.matchAll(/^ {2}([A-Z_]+): v\.optional\(onOff,/gm)].map((match) => match[1]);
    assert.deepEqual(declared.sort(), Object.keys(booleans).sort());
  });

  test('ALLOW_PRIVATE_NETWORKS lifts the guard for ingestion too; INGEST_ALLOW_PRIVATE_NETWORKS is its alias', () => {
    assert.equal(loadConfig({}).allowPrivateNetworks, false);
    assert.equal(loadConfig({}).ingestion.allowPrivateNetworks, false);
    const on = loadConfig({ ALLOW_PRIVATE_NETWORKS: 'on' });
    assert.equal(on.allowPrivateNetworks, true);
    assert.equal(on.ingestion.allowPrivateNetworks, true);
    const alias = loadConfig({ INGEST_ALLOW_PRIVATE_NETWORKS: '1' });
    assert.equal(alias.allowPrivateNetworks, true);
    assert.equal(alias.ingestion.allowPrivateNetworks, true);
    assert.equal(
      loadConfig({ ALLOW_PRIVATE_NETWORKS: 'off', INGEST_ALLOW_PRIVATE_NETWORKS: 'on' }).allowPrivateNetworks,
      false,
      'the new name wins',
    );
    assert.match(
      errorFor({ INGEST_ALLOW_PRIVATE_NETWORKS: 'sure' }),
      /INGEST_ALLOW_PRIVATE_NETWORKS=sure/,
      'a bad alias is named as the operator wrote it',
    );
  });

  test('SIGN_UP defaults to on', () => {
    assert.equal(loadConfig({}).signUp, true);
    assert.equal(loadConfig({ SIGN_UP: 'off' }).signUp, false);
  });

  test('a message names the bad value, never a secret one', () => {
    assert.match(errorFor({ PORT: 'abc' }), /PORT=abc: must be a whole number/);
    const secret = 'not-a-key-but-secret-anyway';
    const message = errorFor({ SECRET_KEY: secret });
    assert.match(message, /SECRET_KEY: must be 32 bytes/);
    assert.equal(message.includes(secret), false);
  });
});

describe('loadEnvFile', () => {
  test('reads .env from the given directory under the real environment, and says which file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-config-'));
    try {
      assert.equal(loadEnvFile(dir), null, 'no .env: nothing read');
      writeFileSync(join(dir, '.env'), 'AMS_TEST_FROM_FILE=file\nAMS_TEST_BOTH=file\n');
      process.env.AMS_TEST_BOTH = 'real';
      assert.equal(loadEnvFile(dir), join(dir, '.env'));
      assert.equal(process.env.AMS_TEST_FROM_FILE, 'file');
      assert.equal(process.env.AMS_TEST_BOTH, 'real', 'the real environment wins');
    } finally {
      delete process.env.AMS_TEST_FROM_FILE;
      delete process.env.AMS_TEST_BOTH;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
