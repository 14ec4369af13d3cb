// src/config.ts: the environment is read once; a bad setting stops the boot, naming every bad one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve, sep } from 'node:path';
import { loadConfig } from '../src/config.js';

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

  test('HASH_QUEUE_MAX: 20 by default, 0 allowed (no waiting at all), not a negative or fraction', () => {
    assert.equal(loadConfig({}).hashQueueMax, 20);
    assert.equal(loadConfig({ HASH_QUEUE_MAX: '0' }).hashQueueMax, 0);
    assert.match(errorFor({ HASH_QUEUE_MAX: '-1' }), /HASH_QUEUE_MAX/);
    assert.match(errorFor({ HASH_QUEUE_MAX: '2.5' }), /HASH_QUEUE_MAX/);
  });

  test('every bad setting is named in one message', () => {
    const message = errorFor({ PORT: 'abc', SCRYPT_LOG_N: '10', BODY_LIMIT_BYTES: 'lots', LOG_REQUESTS: 'maybe' });
    for (const name of ['PORT', 'SCRYPT_LOG_N', 'BODY_LIMIT_BYTES', 'LOG_REQUESTS']) {
      assert.match(message, new RegExp(`\\b${name}\\b`), `${name} missing from: ${message}`);
    }
  });
});
