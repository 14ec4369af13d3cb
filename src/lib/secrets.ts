// Secrets at rest: values clients hand us as credentials (tool metadata, extra llm keys, document
// authorization) are sealed with AES-256-GCM before they reach the database file.
// The key comes from SECRET_KEY or a key file created beside the database on first start.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SECRET_KEY_BYTES = 32;

export interface Sealer {
  /** Encrypts text: `v1:` + base64(iv | auth tag | ciphertext). */
  seal(plain: string): string;
  /** Decrypts what `seal` made; throws if it was altered or sealed under another key. */
  open(sealed: string): string;
}

export function createSealer(key: Buffer): Sealer {
  if (key.length !== SECRET_KEY_BYTES) throw new Error(`the secret key must be ${SECRET_KEY_BYTES} bytes`);
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
    },
    open(sealed) {
      if (!sealed.startsWith(`${VERSION}:`)) throw new Error('not a sealed value');
      const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
  };
}

/** Reads SECRET_KEY's value: 32 bytes as 64 hex digits or as base64. */
export function parseSecretKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  return key.length === SECRET_KEY_BYTES ? key : undefined;
}

/**
 * The key file at `path` (owner-only, mode 0600), created with a random key when missing.
 * Losing this file makes the sealed secrets unreadable: back it up with the database.
 */
export function loadOrCreateKeyFile(path: string): Buffer {
  if (!existsSync(path)) {
    writeFileSync(path, `${randomBytes(SECRET_KEY_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  }
  chmodSync(path, 0o600);
  const key = parseSecretKey(readFileSync(path, 'utf8'));
  if (!key) throw new Error(`the key file ${path} does not hold a ${SECRET_KEY_BYTES}-byte key`);
  return key;
}
