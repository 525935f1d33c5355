/**
 * Conversations across calls: what the responses store (plugins/responses-store) hands the
 * ingress, as a ContextVar, so the core never imports the plugin.
 *
 *   POST /v1/responses {previous_response_id: "resp_1", input: [...]}
 *     store plugin (onRequestBody) ── holds resp_1 for this workspace? ──► ctx.set('responsesTurn',
 *        { previous: { id, items: every input and output item of the chain }, save })
 *     build.ts ── any target: the held items are put before `input` and the id is removed
 *                 (OpenAI does not know a gateway-held id either), see {@link withHistory}
 *              ── a translated answer: `save(response, input items)` once it is complete
 *
 * A `previous_response_id` the store does not hold stays in the body: OpenAI targets look it up
 * themselves (their own stored responses); other targets answer 404 `previous_response_not_found`.
 */
import { isRecord } from '../../providers/openai-shape.js';
import { itemsOf } from './input.js';
import type { Json } from './wire.js';

export interface ResponsesTurn {
  /**
   * The held conversation `previous_response_id` names: its items, oldest first. `provider`: the
   * provider that made that response natively (OpenAI, Azure) and knows its id: a call to the
   * same provider natively is forwarded with the id, untouched; any other target gets the items.
   */
  previous?: { id: string; items: Json[]; provider?: string };
  /**
   * Keeps a response (absent when nothing is to be kept: `store: false`). `input` is the call's
   * own input items (without the previous conversation), as the store lists them; `provider` is
   * set for a response the provider made natively.
   */
  save?: (response: Json, input: Json[], provider?: string) => void;
  /** Set per attempt by the core: true when this attempt's answer is translated (and saved by the ingress). */
  translated?: boolean;
}

declare module '../../context.js' {
  interface ContextVars {
    /** Set by the `responses-store` plugin on Responses calls it continues or keeps. */
    responsesTurn: ResponsesTurn;
  }
}

/**
 * The body with a held conversation expanded: its items before the call's own `input`, and no
 * `previous_response_id`. Item ids and statuses are left out: they name the gateway's records,
 * which an OpenAI target would try (and fail) to look up.
 *
 * @example withHistory({ model: 'm', previous_response_id: 'resp_1', input: 'And then?' }, { id: 'resp_1', items })
 */
export function withHistory(body: Json, previous: { items: Json[] }): Json {
  const next: Json = { ...body, input: [...previous.items.map(asInput), ...itemsOf(body.input)] };
  delete next.previous_response_id;
  return next;
}

function asInput(item: Json): Json {
  if (!isRecord(item)) return item;
  const { id: _id, status: _status, ...rest } = item;
  return rest;
}
