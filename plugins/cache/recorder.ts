/**
 * Recording answers: only a 2xx, in the mode the request asked for, that reached the client
 * whole. A stream is kept as the events the client saw (after later plugins edited them) and
 * stored when it ended normally; an error event, a client that went away or a failed stream
 * stores nothing. Anything over `max_entry_bytes` stops being collected at once, so a huge
 * answer costs no memory here. A request that leads a single flight hands its followers the
 * entry it stored, or nothing when its answer is not worth storing (they then go upstream).
 */
import { performance } from 'node:perf_hooks';
import { serializeSse, type GatewayContext, type PluginHooks, type ResponseHead, type SseEvent, type UpstreamAttempt } from '../../core/index.js';
import type { CacheEntry } from './entry-store.js';
import type { Entries, Semantic } from './lookup.js';
import { entryUsage, mayCarryUsage } from './usage.js';
import type { CacheState } from './state.js';
import type { Flights } from './flights.js';

export interface RecorderDeps {
  entries: Entries;
  semantic: Semantic | undefined;
  maxEntryBytes: number;
  /** Undefined when `single_flight` is off. */
  flights: Flights | undefined;
}

/** The state of a request whose current answer is still being recorded. */
function recording(ctx: GatewayContext): CacheState | undefined {
  const state = ctx.get('cache');
  return state !== undefined && state.recording ? state : undefined;
}

function stop(state: CacheState): void {
  state.recording = false;
  state.events = [];
  state.body = undefined;
  state.usageData = undefined;
}

export type Recorder = Required<Pick<PluginHooks, 'onUpstreamResponse' | 'onResponseHeaders' | 'onResponseChunk' | 'onResponseBody' | 'onResponseEnd' | 'onDone'>>;

export function createRecorder(deps: RecorderDeps): Recorder {
  const { entries, semantic, maxEntryBytes, flights } = deps;

  /** The answer of the flight this request leads is known: its followers get `entry`, or go their own way. */
  function land(state: CacheState, entry: CacheEntry | undefined): void {
    const flight = state.flight;
    if (flight === undefined) return;
    state.flight = undefined;
    flights!.settle(flight, entry);
  }

  /** An upstream answer arrived (every attempt): record it if it is a 2xx in the asked-for mode. */
  function onUpstreamResponse(ctx: GatewayContext, _attempt: UpstreamAttempt, head: ResponseHead): void {
    const state = ctx.get('cache');
    if (state === undefined || state.hit) return;
    stop(state);
    state.heads = 0;
    state.bytes = 0;
    // A plain request answered as a stream (or the reverse) is not what the key describes.
    state.recording = head.status >= 200 && head.status < 300 && head.sse === state.stream;
    const ctype = head.headers['content-type'];
    state.contentType = typeof ctype === 'string' ? ctype : state.stream ? 'text/event-stream' : 'application/json';
  }

  /** The head about to go out. A second one means a later plugin replaced the answer: not ours to keep. */
  function onResponseHeaders(ctx: GatewayContext, head: ResponseHead): void {
    const state = recording(ctx);
    if (state === undefined) return;
    state.heads++;
    if (state.heads > 1 || head.status < 200 || head.status >= 300) stop(state);
  }

  function onResponseChunk(ctx: GatewayContext, event: SseEvent): void {
    const state = recording(ctx);
    if (state === undefined) return;
    if (event.comment !== undefined && event.data.length === 0) return; // pings are transport
    // An error inside a 200 stream (an `event: error`, or OpenAI's `data: {"error": …}`).
    if (event.event === 'error' || event.data.startsWith('{"error"')) return stop(state);
    const text = serializeSse(event);
    state.bytes += text.length;
    if (state.bytes > maxEntryBytes) return stop(state);
    state.events.push(text);
    if (mayCarryUsage(event.data)) state.usageData = event.data;
  }

  function onResponseBody(ctx: GatewayContext, body: Buffer): void {
    const state = recording(ctx);
    if (state === undefined || state.stream) return;
    if (body.length > maxEntryBytes) return stop(state);
    state.body = body;
  }

  /** The last byte went out: store, if the answer ended normally. */
  function onResponseEnd(ctx: GatewayContext): void {
    const state = ctx.get('cache');
    if (state === undefined) return;
    if (!state.recording) return land(state, undefined);
    const complete = !ctx.aborted && ctx.streamError === undefined && ctx.error === undefined;
    const body = state.stream ? (state.events.length > 0 ? Buffer.from(state.events.join('')) : undefined) : state.body;
    const usageJson = state.stream ? state.usageData : state.body;
    stop(state);
    if (!complete || body === undefined || body.length > maxEntryBytes) return land(state, undefined);
    const start = ctx.timings.upstreamStart;
    const entry: CacheEntry = {
      created: Date.now(),
      stream: state.stream,
      content_type: state.contentType,
      body,
      usage: entryUsage(ctx.usage, usageJson),
      latency_ms: start > 0 ? performance.now() - start : 0,
    };
    entries.write(state.workspace, state.key, entry, state.maxAgeMs);
    // After the write: a request arriving from now on finds the entry (read-your-writes), not the flight.
    land(state, entry);
    if (semantic === undefined || state.partition === undefined) return;
    const { partition, key, text, maxAgeMs } = state;
    if (state.vector !== undefined) return semantic.remember(partition, key, entry.created, maxAgeMs, state.vector);
    // A forced refresh skipped the lookup, so the prompt is embedded now, after the answer was sent.
    if (text !== undefined) {
      void semantic.embed(text).then((vector) => {
        if (vector !== undefined) semantic.remember(partition, key, entry.created, maxAgeMs, vector);
      });
    }
  }

  /** The request is over: a flight it still leads (it failed before its response ended) ends with nothing. */
  function onDone(ctx: GatewayContext): void {
    const state = ctx.get('cache');
    if (state !== undefined && state.flight !== undefined) land(state, undefined);
  }

  return { onUpstreamResponse, onResponseHeaders, onResponseChunk, onResponseBody, onResponseEnd, onDone };
}
