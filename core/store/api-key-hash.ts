/**
 * Gateway API keys: generated with 256 bits of randomness, shown once, stored only as SHA-256.
 * A fast hash is right here (unlike passwords): the input is a long random secret, so there is
 * nothing to brute-force, and the hot path looks keys up on every request.
 */
import { createHash, randomBytes } from 'node:crypto';
import { maskSecret } from './secrets.js';

export function generateApiKey(): string {
  return `gw-${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

export const maskApiKey = maskSecret;
