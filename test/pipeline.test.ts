/**
 * The hook runner as plain functions: order, sync fast path, async continuation, failures.
 */
import t from 'tap';
import { buildPipeline, runHooks, upTo, type LoadedPlugin } from '../core/pipeline.js';
import { GatewayContext } from '../core/context.js';
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
