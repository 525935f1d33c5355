/**
 * Anthropic-looking ids for answers translated from OpenAI.
 *
 * A completion id is reused when there is one (`chatcmpl-abc` → `msg_abc`), so the id a client
 * logs can still be found in the upstream's logs. Servers that send no id get a random one:
 * Anthropic SDKs expect `id` to be a non-empty string.
 */
import { randomBytes } from 'node:crypto';
import type { IdFactory } from './wire.js';

/** 18 random bytes: 24 base64url characters, the length of Anthropic's own ids. */
export const randomId: IdFactory = (prefix) => `${prefix}_${randomBytes(18).toString('base64url')}`;

/** @example messageId('chatcmpl-B9MBs8', randomId) // 'msg_B9MBs8' */
export function messageId(completionId: unknown, newId: IdFactory): string {
  if (typeof completionId !== 'string') return newId('msg');
  const bare = completionId.startsWith('chatcmpl-') ? completionId.slice('chatcmpl-'.length) : completionId;
  return bare.length > 0 ? `msg_${bare}` : newId('msg');
}
