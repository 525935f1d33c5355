/**
 * Ids for answers translated from chat completions. Every id is fresh and random: a response id is
 * a storage key (`previous_response_id`, `GET /v1/responses/{id}`), so it must not collide even
 * when an upstream reuses its completion ids (mock servers, some local servers do).
 */
import { randomBytes } from 'node:crypto';
import type { IdFactory } from './wire.js';

/** 24 random bytes as hex: the length of OpenAI's own `resp_…` ids. */
export const randomId: IdFactory = (prefix) => `${prefix}_${randomBytes(24).toString('hex')}`;
