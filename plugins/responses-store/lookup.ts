/**
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `DELETE /v1/responses/{id}`
 * for responses this gateway kept. They are pass-through routes (OpenAI keeps its own responses):
 * the plugin answers in `onRequest` when it holds the id for the caller's workspace, and lets
 * everything else go to the provider as before.
 *
 *   input_items query: limit (1–100, default 20), order (asc | desc, default desc), after (an item id)
 *   GET ?stream=true (a replay as events) is a 400 for kept responses: they are read whole.
 */
import { Errors, reply, type GatewayContext, type Reply } from '../../core/index.js';
import { ResponsesStoreErrors } from './errors.js';
import type { KeptResponse, KeptResponses } from './records.js';

const PATH = /^\/responses\/([^/]+)(\/input_items)?$/;

/** The kept response a pass-through call addresses, and what it asks for; undefined when it is not one. */
export function matchLookup(ctx: GatewayContext): { id: string; items: boolean } | undefined {
  if (ctx.route.kind !== 'passthrough' || (ctx.method !== 'GET' && ctx.method !== 'DELETE')) return undefined;
  const match = PATH.exec(ctx.route.upstreamPath);
  if (match === null) return undefined;
  const items = match[2] !== undefined;
  if (items && ctx.method !== 'GET') return undefined;
  let id: string;
  try {
    id = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  return { id, items };
}

export async function answerLookup(ctx: GatewayContext, record: KeptResponse, items: boolean, records: KeptResponses): Promise<Reply> {
  if (ctx.method === 'DELETE') {
    await records.delete(record);
    return reply(200, { id: record.id, object: 'response', deleted: true });
  }
  if (!items) {
    // Replaying a kept response as events is not offered; a JSON body where the SDK waits for
    // events would fail obscurely, so say so.
    if (new URLSearchParams(ctx.search).get('stream') === 'true') {
      throw Errors.unsupportedParameter('A response kept by the gateway can be read whole, not replayed as a stream.', { param: 'stream' });
    }
    return reply(200, record.response);
  }
  return reply(200, listItems(record.input, new URLSearchParams(ctx.search)));
}

function listItems(input: Array<Record<string, unknown>>, query: URLSearchParams): Record<string, unknown> {
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw ResponsesStoreErrors.invalidQuery('limit must be an integer from 1 to 100.', { param: 'limit' });
  }
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw ResponsesStoreErrors.invalidQuery('order must be "asc" or "desc".', { param: 'order' });
  let items = order === 'asc' ? input : [...input].reverse();
  const after = query.get('after');
  if (after !== null) {
    const at = items.findIndex((item) => item.id === after);
    if (at === -1) throw ResponsesStoreErrors.invalidQuery('after names no input item of this response.', { param: 'after' });
    items = items.slice(at + 1);
  }
  const data = items.slice(0, limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data.at(-1)?.id as string | undefined) ?? null,
    has_more: items.length > limit,
  };
}
