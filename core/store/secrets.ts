/**
 * Provider secrets at rest: AES-256-GCM under a key derived from the master key.
 *
 * The master key is `GATEWAY_MASTER_KEY` (32+ characters), or, when that is unset, a random key
 * generated once into `<data dir>/master.key` with mode 0600 (and a warning: whoever reads the
 * data dir can then read the secrets; set the variable in production). The AES key is derived
 * with HKDF-SHA256, so the master key itself never touches the cipher.
 *
 * Stored form: `v1:<iv>:<tag>:<ciphertext>` (base64url). API keys are not secrets here: only
 * their SHA-256 hash is stored (see api-key-hash.ts).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../logger.js';

export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
}

export function loadMasterKey(dataDir: string, env: NodeJS.ProcessEnv, log: Logger): Buffer {
  const fromEnv = env.GATEWAY_MASTER_KEY;
  if (fromEnv !== undefined && fromEnv.length > 0) {
    if (fromEnv.length < 32) throw new Error('GATEWAY_MASTER_KEY must be at least 32 characters');
    return Buffer.from(fromEnv, 'utf8');
  }
  const file = join(dataDir, 'master.key');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64url') + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  log.warn('no GATEWAY_MASTER_KEY set: generated a master key file; set GATEWAY_MASTER_KEY in production', { file });
  return key;
}

export function createSecretBox(master: Buffer): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', master, Buffer.from('gateway-store'), Buffer.from('provider-secrets-v1'), 32));
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `v1:${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${ct.toString('base64url')}`;
    },
    decrypt(sealed) {
      const [v, iv, tag, ct] = sealed.split(':');
      if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** `sk-abc…xyz` → `sk-a*******xyz`: enough to recognise a key, never enough to use it. */
export function maskSecret(secret: string): string {
  if (secret.length <= 8) return '*'.repeat(secret.length);
  return `${secret.slice(0, 4)}${'*'.repeat(7)}${secret.slice(-3)}`;
}
