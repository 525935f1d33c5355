/**
 * The `realtime` plugin: OpenAI's Realtime API (`GET /v1/realtime?model=…` upgraded to a
 * WebSocket) through the gateway, to OpenAI or to Azure OpenAI (`/openai/realtime?api-version=…
 * &deployment=…`), with every plugin of the pipeline applied to the session as to a model call.
 *
 *   upgrade request ─▶ onRequest (this plugin, before auth): the gateway key from
 *                      `Authorization: Bearer` or the `openai-insecure-api-key.<key>` subprotocol
 *                      (browsers cannot set headers), the model from the query
 *     ─▶ auth, virtual keys, config, rate limits, budgets (the core's upgrade path, core/upgrade.ts)
 *     ─▶ handle: target(s) from the plan or the headers ─▶ upstream WebSocket (provider key
 *        injected; refused ─▶ that HTTP answer) ─▶ 101 to the client ─▶ session (session.ts)
 *     ─▶ socket closed ─▶ onDone: the log record (`route: realtime`), usage summed from
 *        `response.done` events, cost, budgets and token limits charged
 *
 * The key the client authenticated with is never sent upstream: the upstream gets the target's
 * key (a virtual key, a config target, a stored provider). Without the auth plugin the gateway is
 * a plain proxy and the client's bearer (or subprotocol key) is the provider's key, as in direct
 * mode over HTTP. The plugin must come before `auth` in the pipeline for the bearer and the
 * subprotocol key to count as the gateway key; `x-gateway-api-key` works anywhere.
 */
import { performance } from 'node:perf_hooks';
import {
  definePlugin,
  guardedLookup,
  headerString,
  reply,
  type GatewayContext,
  type Reply,
  type Target,
  type Upgrade,
  type UpgradeRoute,
} from '../../core/index.js';
import { realtimeOptionsSchema, type RealtimeOptions } from './schema.js';
import { candidates, directTarget, upstreamCall } from './target.js';
import { connectUpstream, type Connected } from './upstream.js';
import { runSession } from './session.js';

declare module '../../core/context.js' {
  interface ContextVars {
    /** The gateway key as a Realtime client sent it outside `x-gateway-api-key` (bearer or subprotocol). */
    realtimeCredential: string;
  }
}

/** The subprotocol that carries a key from browsers, as OpenAI's own endpoint accepts it. */
const KEY_PROTOCOL = 'openai-insecure-api-key.';
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function offeredProtocols(ctx: GatewayContext): string[] {
  const raw = headerString(ctx.headers, 'sec-websocket-protocol');
  return raw === undefined ? [] : raw.split(',').map((p) => p.trim()).filter((p) => p.length > 0);
}

function keyFromProtocols(protocols: ReadonlyArray<string>): string | undefined {
  const carrier = protocols.find((p) => p.startsWith(KEY_PROTOCOL));
  const key = carrier?.slice(KEY_PROTOCOL.length);
  return key === undefined || key.length === 0 ? undefined : key;
}

function bearerOf(ctx: GatewayContext): string | undefined {
  return BEARER.exec(headerString(ctx.headers, 'authorization') ?? '')?.[1];
}

/**
 * The subprotocol answered to the client: the upstream's choice when the client offered it, else
 * `realtime`, else the first the client offered that carries no key. A client that offered
 * subprotocols must get one back.
 */
function chosenProtocol(offered: ReadonlyArray<string>, upstream: string): string | undefined {
  if (offered.length === 0) return undefined;
  if (upstream.length > 0 && offered.includes(upstream)) return upstream;
  if (offered.includes('realtime')) return 'realtime';
  return offered.find((p) => !p.startsWith(KEY_PROTOCOL)) ?? offered[0];
}

export default definePlugin<RealtimeOptions>({
  name: 'realtime',
  configSchema: realtimeOptionsSchema,
  setup(app, options) {
    const policy = (): typeof app.config.security.custom_hosts => app.config.security.custom_hosts;
    const lookup = guardedLookup(policy);

    /** Opens the upstream: each candidate in turn until one accepts. */
    async function openUpstream(ctx: GatewayContext, list: Array<{ target: Target; path: string }>, protocols: string[]): Promise<Connected> {
      const credential = ctx.get('realtimeCredential');
      const authed = ctx.get('principal') !== undefined;
      let last: Connected | undefined;
      for (const [i, { target, path }] of list.entries()) {
        // A config leaf without its own key borrows the caller's bearer: never the gateway key.
        if (authed && credential !== undefined && target.apiKey === credential) delete target.apiKey;
        const call = upstreamCall(ctx, target, policy());
        ctx.target = target;
        ctx.provider = target.provider;
        ctx.optionPath = path;
        ctx.retryCount = i;
        const t = ctx.timings;
        t.upstreamStart = performance.now();
        last = await connectUpstream(call, {
          protocols,
          timeout: target.requestTimeout ?? options.connect_timeout,
          maxPayload: options.max_message_bytes,
          lookup,
          onAbort: (fn) => ctx.onAbort(fn),
        });
        t.upstreamHeaders = performance.now();
        t.upstreamMs += t.upstreamHeaders - t.upstreamStart;
        if (last.kind === 'open' || ctx.aborted) return last;
        ctx.log.warn('realtime upstream refused the session', { requestId: ctx.id, option: path, status: last.kind === 'refused' ? last.status : last.error.code });
      }
      return last!;
    }

    async function handle(ctx: GatewayContext, upgrade: Upgrade): Promise<Reply | void> {
      if (ctx.aborted) return;
      const credential = ctx.get('realtimeCredential');
      const authed = ctx.get('principal') !== undefined;
      const bearer = bearerOf(ctx);
      // Direct mode: the client's own provider key, unless it is the key it authenticated with.
      const providerKey = authed ? (credential === undefined ? bearer : undefined) : (bearer ?? keyFromProtocols(upgrade.protocols));
      const list = candidates(ctx, () => directTarget(ctx, policy(), providerKey));
      const upstreamProtocols = upgrade.protocols.filter((p) => !p.startsWith(KEY_PROTOCOL));
      const opened = await openUpstream(ctx, list, upstreamProtocols);
      if (opened.kind === 'failed') throw opened.error;
      if (opened.kind === 'refused') {
        // As for any upstream error: its status and body, marked as the upstream's.
        const type = opened.headers['content-type'];
        ctx.source = 'upstream';
        return reply(opened.status, opened.body, { ...(typeof type === 'string' ? { 'content-type': type } : {}), 'x-gateway-error-source': 'upstream' });
      }
      const upstream = opened.ws;
      let client;
      try {
        client = await upgrade.accept({ protocol: chosenProtocol(upgrade.protocols, upstream.protocol), maxPayload: options.max_message_bytes });
      } catch (err) {
        upstream.terminate();
        throw err;
      }
      if (client === undefined) {
        upstream.terminate();
        return;
      }
      const started = performance.now();
      const end = await runSession(client, opened, { highWaterMark: options.high_water_mark });
      ctx.timings.upstreamMs += performance.now() - started;
      ctx.usage = end.meter.usage;
      if (end.error !== undefined) ctx.streamError = end.error;
      ctx.log.debug('realtime session closed', { requestId: ctx.id, closedBy: end.closedBy, code: end.code, responses: end.meter.responses });
    }

    const route: UpgradeRoute = { path: '/v1/realtime', name: 'realtime', handle };

    return {
      upgrades: [route],
      onRequest(ctx) {
        if (ctx.get('upgrade') !== route) return;
        // WebSocket clients that cannot send x-gateway-api-key: the bearer, or the key subprotocol.
        if (headerString(ctx.headers, 'x-gateway-api-key') === undefined) {
          const key = bearerOf(ctx) ?? keyFromProtocols(offeredProtocols(ctx));
          if (key !== undefined) {
            ctx.headers['x-gateway-api-key'] = key;
            ctx.set('realtimeCredential', key);
          }
        }
        // The session's model, as a model call's body would carry it: routing by `@slug/model`,
        // the log's model and the session's cost read it from there.
        const query = new URLSearchParams(ctx.search);
        const model = query.get('model') ?? query.get('deployment');
        if (model !== null && model.length > 0) ctx.body = { model: model.slice(0, 256) };
      },
    };
  },
});
