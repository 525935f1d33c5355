/**
 * The hook runner as plain functions: order, sync fast path, async continuation, failures.
 */
import t from 'tap';
import { buildPipeline, observeDone, runHooks, upTo, type LoadedPlugin } from '../core/pipeline.js';
import { GatewayContext, type Outcome } from '../core/context.js';
import { createLogger } from '../core/logger.js';
import { reply, isReply } from '../core/reply.js';
import type { Step } from '../core/plugin.js';

function ctx(): GatewayContext {
  return new GatewayContext({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: {},
    httpVersion: '1.1',
    route: { kind: 'not_found' },
    log: createLogger({ level: 'silent' }),
    start: 0,
  });
}

function plugin(name: string, index: number, onRequest: (c: GatewayContext) => Step | Promise<Step>): LoadedPlugin {
  return { name, index, hooks: { onRequest } };
}

t.test('phases nobody uses are null; response lists are reversed', async (t) => {
  const p = buildPipeline([
    { name: 'a', index: 0, hooks: { onResponseEnd: () => undefined } },
    { name: 'b', index: 1, hooks: { onResponseEnd: () => undefined, onRequest: () => undefined } },
  ]);
  t.equal(p.onRequestBody, null);
  t.equal(p.onDone, null);
  t.same(p.onResponseEnd!.map((e) => e.plugin), ['b', 'a']);
  t.same(upTo(p.onResponseEnd, 0)!.map((e) => e.plugin), ['a']);
});

t.test('synchronous hooks return synchronously', async (t) => {
  const seen: string[] = [];
  const p = buildPipeline([plugin('a', 0, () => void seen.push('a')), plugin('b', 1, () => void seen.push('b'))]);
  const result = runHooks(p.onRequest!, ctx(), (fn) => fn(ctx()));
  t.equal(result, undefined, 'not a promise');
  t.same(seen, ['a', 'b']);
});

t.test('an async hook continues the chain after it settles; a reply stops it', async (t) => {
  const seen: string[] = [];
  const p = buildPipeline([
    plugin('a', 0, async () => void seen.push('a')),
    plugin('b', 1, () => {
      seen.push('b');
      return reply(429, 'slow down');
    }),
    plugin('c', 2, () => void seen.push('c')),
  ]);
  const c = ctx();
  const stop = await runHooks(p.onRequest!, c, (fn) => fn(c));
  t.same(seen, ['a', 'b']);
  t.equal(stop?.index, 1);
  t.equal(stop?.plugin, 'b');
  t.ok(isReply(stop?.reply));
});

t.test('a throwing or rejecting hook becomes a plugin_error stop; a non-reply return is refused', async (t) => {
  const c = ctx();
  for (const bad of [
    () => {
      throw new Error('sync');
    },
    () => Promise.reject(new Error('async')),
    () => 42 as unknown as Step,
  ]) {
    const p = buildPipeline([plugin('bad', 0, bad)]);
    const stop = await runHooks(p.onRequest!, c, (fn) => fn(c));
    t.equal(stop?.error?.code, 'plugin_error');
    t.equal(stop?.plugin, 'bad');
  }
});

t.test('onDone runs in batches: plugin by plugin over the requests of a turn, each request in plugin order', async (t) => {
  const seen: string[] = [];
  const errors: string[] = [];
  const failing = ctx();
  const logged = (c: GatewayContext, tag: string): GatewayContext =>
    Object.assign(c, { log: { ...c.log, error: (msg: string, fields?: { plugin?: string }) => errors.push(`${tag}:${fields?.plugin}:${msg}`) } });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const p = buildPipeline([
    {
      name: 'a',
      index: 0,
      hooks: {
        onDone: async (c: GatewayContext) => {
          seen.push(`a:${c.id === failing.id ? 'x' : 'y'}`);
          if (c.id === failing.id) await held;
        },
      },
    },
    {
      name: 'b',
      index: 1,
      hooks: {
        onDone: (c: GatewayContext) => {
          seen.push(`b:${c.id === failing.id ? 'x' : 'y'}`);
          if (c.id === failing.id) throw new Error('boom');
        },
      },
    },
    { name: 'c', index: 2, hooks: { onDone: (c: GatewayContext) => void seen.push(`c:${c.id === failing.id ? 'x' : 'y'}`) } },
  ]);
  const outcome: Outcome = { status: 200, error: undefined, source: 'upstream', aborted: false, streamError: undefined, durationMs: 1, upstreamMs: 1 };
  const first = observeDone(p.onDone!, logged(failing, 'x'), outcome);
  const second = observeDone(p.onDone!, logged(ctx(), 'y'), outcome);
  t.equal(first, second, 'requests finished in the same turn share a batch');
  t.same(seen, [], 'nothing runs inside the request that finished');
  let settled = false;
  void first.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(seen, ['a:x', 'a:y'], "the next plugin waits for the previous one's pending hook");
  t.equal(settled, false);
  release();
  await first;
  t.same(seen, ['a:x', 'a:y', 'b:x', 'b:y', 'c:x', 'c:y'], 'a throwing hook is logged and the others still run');
  t.same(errors, ['x:b:plugin hook failed']);
  const later = observeDone(p.onDone!, ctx(), outcome);
  t.not(later, first, 'a request finishing after the batch ran starts a new one');
  await later;
});
