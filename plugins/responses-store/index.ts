/**
 * The `responses-store` plugin: Responses API conversations across every provider.
 *
 * OpenAI keeps a response (`store`, true by default) so that a later call can continue it with
 * `previous_response_id` and `GET /v1/responses/{id}` can read it back. Other providers keep
 * nothing, so for calls the gateway translates (core/ingress/responses) this plugin keeps them:
 *
 *   POST /v1/responses (onRequestBody)
 *     previous_response_id held for this workspace ─► ctx 'responsesTurn'.previous: the conversation's
 *                                                     items, expanded into `input` for any target
 *     store !== false ──────────────────────────────► ctx 'responsesTurn'.save: the translated
 *                                                     response is kept (input items + response)
 *   GET /v1/responses/{id}[/input_items], DELETE /v1/responses/{id} (onRequest)
 *     held for this workspace ─► answered here;  otherwise ─► passed to the provider as before
 *
 * Responses OpenAI (or Azure) made natively are copied too, marked with their provider, so a
 * conversation started there continues on any other provider (a fallback, a switch); on the
 * provider that made them they go on natively, and their reads and deletes still go to it.
 * Another workspace never sees a kept response: to it the id is unknown. Kept responses expire
 * after `retention_days` (a sweep runs every ten minutes). Embedded mode keeps them in LMDB;
 * distributed mode in PostgreSQL, shared by every host (records.ts, pg-records.ts).
 */
import { actingWorkspace, definePlugin, inputItems, PASS, type GatewayContext, type MaybePromise, type SseEvent, type Step } from '../../core/index.js';
import { ResponsesStoreErrors } from './errors.js';
import { answerLookup, matchLookup } from './lookup.js';
import { conversation, ResponseRecords, type KeptResponses } from './records.js';
import { openPgResponses } from './pg-records.js';
import { responsesStoreOptionsSchema, type ResponsesStoreOptions } from './schema.js';

type Json = Record<string, unknown>;

const DAY_MS = 86_400_000;

/** The turn of a Responses call whose answer came natively and is to be kept, if this is one. */
function nativeTurn(ctx: GatewayContext): { save?: (response: Json, input: Json[], provider?: string) => void } | undefined {
  if (ctx.route.kind !== 'model' || ctx.route.name !== 'responses') return undefined;
  const turn = ctx.get('responsesTurn');
  return turn?.save !== undefined && turn.translated === false && ctx.provider !== undefined ? turn : undefined;
}

function isResponse(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && (value as Json).object === 'response' && typeof (value as Json).id === 'string';
}
const SWEEP_EVERY_MS = 10 * 60_000;

export default definePlugin<ResponsesStoreOptions>({
  name: 'responses-store',
  configSchema: responsesStoreOptionsSchema,
  async setup(app, options) {
    // The driver is chosen once: distributed mode keeps responses in PostgreSQL, where every host finds them.
    const distributed = app.store.distributed;
    const records: KeptResponses = distributed ? await openPgResponses(distributed.pg, app.log) : new ResponseRecords(app.store);
    const retentionMs = options.retention_days * DAY_MS;

    let sweeping = false;
    const sweep = (): void => {
      if (sweeping) return;
      sweeping = true;
      const step = (): Promise<void> => records.sweep().then((n) => (n > 0 ? new Promise<void>((r) => setImmediate(r)).then(step) : undefined));
      void step()
        .catch((err: unknown) => app.log.warn('responses sweep failed', { err }))
        .finally(() => {
          sweeping = false;
        });
    };
    const timer = setInterval(sweep, SWEEP_EVERY_MS);
    timer.unref();
    sweep();

    function keep(workspace: string, previous: string | null, response: Json, input: Json[], provider?: string): void {
      const id = response.id;
      if (typeof id !== 'string') return;
      const record = { id, workspace_id: workspace, previous_response_id: previous, input, response, native_provider: provider ?? null, expires_at: Date.now() + retentionMs, bytes: 0 };
      record.bytes = JSON.stringify(record).length;
      if (record.bytes > options.max_record_bytes) {
        app.log.warn('response not kept: larger than max_record_bytes', { response_id: id });
        return;
      }
      // Keeping is a side effect of an answer already made: a full store must not fail it.
      if (!distributed && app.store.capacity.full()) {
        app.log.warn('response not kept: the store is full', { response_id: id });
        return;
      }
      try {
        records.put(record);
      } catch (err) {
        app.log.warn('response not kept', { response_id: id, err });
      }
    }

    async function lookupKept(ctx: GatewayContext, lookup: { id: string; items: boolean }): Promise<Step> {
      const record = await records.find(lookup.id);
      if (record === undefined) return undefined; // not ours: the provider's own stored response
      if (record.native_provider) {
        // The provider holds it too: reads and deletes are its to answer; a delete drops our copy as well.
        if (ctx.method === 'DELETE' && record.workspace_id === actingWorkspace(app, ctx)) await records.delete(record);
        return undefined;
      }
      // Another workspace's: not found, and the provider is not asked about an id it cannot know.
      if (record.workspace_id !== actingWorkspace(app, ctx)) throw ResponsesStoreErrors.notFound(`No response with id "${lookup.id}" was found.`, { param: 'response_id' });
      return answerLookup(ctx, record, lookup.items, records);
    }

    async function prepare(ctx: GatewayContext, body: Json): Promise<Step> {
      const workspace = actingWorkspace(app, ctx);
      const previousId = typeof body.previous_response_id === 'string' && body.previous_response_id.length > 0 ? body.previous_response_id : null;
      const held = previousId === null ? undefined : await conversation(records, previousId, workspace, options.max_conversation_bytes);
      const store = body.store !== false;
      if (held === undefined && !store) return undefined;
      const provider = held?.last.native_provider ?? undefined;
      ctx.set('responsesTurn', {
        ...(held !== undefined ? { previous: { id: previousId!, items: held.items, ...(provider !== undefined ? { provider } : {}) } } : {}),
        ...(store ? { save: (response: Json, input: Json[], native?: string) => keep(workspace, previousId, response, input, native) } : {}),
      });
      return undefined;
    }

    return {
      /** A kept response read or deleted through the pass-through paths. */
      onRequest: function answerKept(ctx: GatewayContext): MaybePromise<Step> {
        const lookup = matchLookup(ctx);
        if (lookup !== undefined) return lookupKept(ctx, lookup);
        // A model call that is not a Responses call: nothing for this plugin's later hooks to do.
        return ctx.route.kind === 'model' && ctx.route.name !== 'responses' ? PASS : undefined;
      },
      /** A Responses call: the conversation it continues, and whether its answer is kept. */
      onRequestBody: function prepareTurn(ctx: GatewayContext): MaybePromise<Step> {
        if (ctx.route.kind !== 'model' || ctx.route.name !== 'responses' || ctx.body === undefined) return undefined;
        return prepare(ctx, ctx.body);
      },
      /** A native (OpenAI, Azure) Responses answer, whole: a copy is kept. */
      onResponseBody: function keepNative(ctx: GatewayContext, body: Buffer): void {
        const turn = nativeTurn(ctx);
        if (turn === undefined || ctx.status !== 200) return;
        let response: unknown;
        try {
          response = JSON.parse(body.toString('utf8'));
        } catch {
          return;
        }
        if (isResponse(response)) turn.save!(response, inputItems(ctx.body!.input), ctx.provider);
      },
      /** A native Responses stream: its `response.completed` event carries the whole response. */
      onResponseChunk: function keepNativeStream(ctx: GatewayContext, event: SseEvent): undefined {
        if (ctx.route.kind !== 'model' || ctx.route.name !== 'responses' || event.event !== 'response.completed') return undefined;
        const turn = nativeTurn(ctx);
        if (turn === undefined) return undefined;
        try {
          const data = JSON.parse(event.data) as Json;
          if (isResponse(data.response)) turn.save!(data.response, inputItems(ctx.body!.input), ctx.provider);
        } catch {
          // Not JSON: nothing to keep; the client gets the event as it came.
        }
        return undefined;
      },
      close: () => clearInterval(timer),
    };
  },
});
