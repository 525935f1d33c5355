/**
 * The one response sequencer: a gateway reply and a proxied upstream answer get the same hook
 * order, and a response hook replaces the answer once (the replacement's head is shown to the
 * hooks again, it is not replaced again); onResponseEnd runs once, also after an upstream failure
 * mid-stream.
 */
import t from 'tap';
import { request } from 'undici';
import { definePlugin, reply, type PluginDefinition, type PluginHooks } from '../core/index.js';
import { startGateway, startMock, direct, sdk } from './helpers/gateway.js';

function journaling(name: string, journal: string[], extra: Partial<PluginHooks> = {}): PluginDefinition<never> {
  return definePlugin({
    name,
    setup: () => ({
      onRequest: extra.onRequest,
      onResponseHeaders(ctx, head) {
        journal.push(`headers:${name}:${head.status}`);
        return extra.onResponseHeaders?.(ctx, head);
      },
      onResponseBody: () => void journal.push(`body:${name}`),
      onResponseEnd: (ctx) => void journal.push(`end:${name}:${ctx.streamError?.code ?? 'ok'}`),
    }),
  }) as PluginDefinition<never>;
}

const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

async function settle(journal: string[], count: number): Promise<void> {
  for (let i = 0; i < 200 && journal.filter((j) => j.startsWith('end:')).length < count; i++) await new Promise((r) => setTimeout(r, 5));
}

t.test('an upstream answer replaced by a response hook: once, and every hook sees the head that goes out', async (t) => {
  const mock = await startMock(t);
  const journal: string[] = [];
  const gw = await startGateway(t, {
    yaml: 'pipeline: [outer, mask]\n',
    plugins: {
      outer: journaling('outer', journal),
      // Always answers with a reply: the sequencer must not loop, nor replace the replacement.
      mask: journaling('mask', journal, { onResponseHeaders: (_ctx, head) => (head.status >= 500 ? reply(200, { masked: true }) : reply(203, { again: true })) }),
    },
  });
  const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock, 'status=500'), 'content-type': 'application/json' }, body: chat });
  t.equal(res.statusCode, 200);
  t.same(await res.body.json(), { masked: true }, 'the first replacement went out');
  await settle(journal, 2);
  t.same(journal, ['headers:mask:500', 'headers:mask:200', 'headers:outer:200', 'body:mask', 'body:outer', 'end:mask:ok', 'end:outer:ok']);
});

t.test('a gateway reply goes through the same sequence (up to the plugin that answered)', async (t) => {
  const mock = await startMock(t);
  const journal: string[] = [];
  const gw = await startGateway(t, {
    yaml: 'pipeline: [outer, gate, inner]\n',
    plugins: {
      outer: journaling('outer', journal),
      gate: journaling('gate', journal, {
        onRequest: () => reply(403, { error: { message: 'no', type: 'permission_error', param: null, code: 'gate_closed' } }),
        onResponseHeaders: (_ctx, head) => (head.status === 403 ? reply(401, { replaced: true }) : undefined),
      }),
      inner: journaling('inner', journal),
    },
  });
  const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json' }, body: chat });
  t.equal(res.statusCode, 401);
  t.same(await res.body.json(), { replaced: true });
  await settle(journal, 2);
  t.same(journal, ['headers:gate:403', 'headers:gate:401', 'headers:outer:401', 'body:gate', 'body:outer', 'end:gate:ok', 'end:outer:ok'], 'inner never ran; the order is the same as for an upstream answer');
  t.equal(mock.requests.length, 0);
});

t.test('an upstream that fails mid-stream: error event, then onResponseEnd once with the stream error', async (t) => {
  const mock = await startMock(t);
  const journal: string[] = [];
  const gw = await startGateway(t, { yaml: 'pipeline: [outer]\n', plugins: { outer: journaling('outer', journal) } });
  const stream = await sdk(gw, mock, 'chunks=10;chunk_delay=5;reset=mid_stream').chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'cut me off somewhere in the middle' }] });
  let failed: unknown;
  try {
    for await (const _ of stream) void _;
  } catch (err) {
    failed = err;
  }
  t.ok(failed, 'the client sees the failure');
  await settle(journal, 1);
  t.same(journal, ['headers:outer:200', 'end:outer:upstream_stream_error']);
});
