/**
 * Streaming: SSE flows chunk by chunk, failures after the head are visible, pings cover a slow
 * first byte, a client that leaves aborts the upstream, and a slow client slows the upstream.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startGateway, startMock, sdk, direct } from './helpers/gateway.js';

const chatBody = (content: string): string => JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content }] });

/** Reads an SSE response as it arrives, keeping each raw piece and when it came. */
async function readStream(res: Response): Promise<{ text: string; arrivals: Array<{ at: number; text: string }> }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const arrivals: Array<{ at: number; text: string }> = [];
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const piece = decoder.decode(value, { stream: true });
    arrivals.push({ at: performance.now(), text: piece });
    text += piece;
  }
  return { text, arrivals };
}

t.test('streaming', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, stream_ping_interval: 150}\n' });
  const post = (directives: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock, directives), 'content-type': 'application/json', ...headers }, body });

  t.test('events arrive one by one, in order, not buffered', async (t) => {
    const res = await post('chunks=6;chunk_delay=60', chatBody('one by one'));
    t.equal(res.headers.get('content-type'), 'text/event-stream');
    const { text, arrivals } = await readStream(res);
    const events = text.split('\n\n').filter((e) => e.startsWith('data: {'));
    const contents = events.map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '');
    t.equal(contents.join(''), 'Mock reply to: one by one', 'content in order');
    t.ok(text.endsWith('data: [DONE]\n\n'));
    // 6 content events 60 ms apart: with no buffering they arrive spread over ~300 ms, in several reads.
    t.ok(arrivals.length >= 5, `arrived in ${arrivals.length} reads`);
    t.ok(arrivals.at(-1)!.at - arrivals[0]!.at > 200, 'spread over time like the upstream sent them');
  });

  t.test('an upstream reset mid-stream ends with event: error, not a normal end', async (t) => {
    const res = await post('chunks=8;chunk_delay=20;reset=mid_stream;reset_after=3', chatBody('cut'));
    t.equal(res.status, 200);
    const { text } = await readStream(res);
    t.notMatch(text, /\[DONE\]/, 'no normal end');
    const tail = text.trimEnd().split('\n\n').at(-1)!;
    t.match(tail, /^event: error\ndata: /);
    const error = JSON.parse(tail.split('\n')[1]!.slice(6)) as { error: { code: string } };
    t.equal(error.error.code, 'upstream_stream_error');
  });

  t.test('the SDK surfaces the mid-stream error as an exception', async (t) => {
    const stream = await sdk(gw, mock, 'chunks=8;chunk_delay=10;reset=mid_stream;reset_after=2').chat.completions.create({
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'sdk cut' }],
    });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    t.type(err, OpenAI.APIError);
    t.ok(text.length > 0, 'what arrived before the failure was delivered');
  });

  t.test('pings keep a slow first byte alive, then the stream follows', async (t) => {
    const res = await post('first_byte_delay=700;chunks=3', chatBody('slow start'));
    t.equal(res.status, 200);
    const { text } = await readStream(res);
    const pings = text.split(': ping\n\n').length - 1;
    t.ok(pings >= 2, `${pings} pings before the first byte`);
    t.ok(text.indexOf(': ping') < text.indexOf('data: '), 'pings come first');
    t.match(text, /data: \[DONE\]\n\n$/);
  });

  t.test('after pings, an upstream error becomes an error event', async (t) => {
    const res = await post('delay=500;status=503', chatBody('late error'));
    t.equal(res.status, 200, 'the head was already sent by the pings');
    const { text } = await readStream(res);
    t.match(text, /: ping\n\n/);
    t.match(text, /event: error\ndata: \{"error":\{"message":"[^"]+","type":"server_error"/, 'carries the upstream error object');
  });

  t.test('after pings, an upstream timeout becomes an error event', async (t) => {
    const res = await post('hang=1', chatBody('timeout'), { 'x-gateway-request-timeout': '500' });
    const { text } = await readStream(res);
    t.match(text, /event: error\ndata: .*"code":"upstream_timeout"/);
  });
});

/** An upstream that streams forever and reports what happened to its response. */
async function endlessUpstream(t: { teardown(fn: () => unknown): void }, chunk: Buffer, everyMs: number) {
  const state = { written: 0, closedAt: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    state.requests++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let timer: NodeJS.Timeout | undefined;
    const pump = (): void => {
      // Honour backpressure like a well-behaved server: stop when write() says so.
      while (!res.destroyed) {
        state.written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
        if (everyMs > 0) return void (timer = setTimeout(pump, everyMs));
      }
    };
    res.on('close', () => {
      state.closedAt = performance.now();
      clearTimeout(timer);
    });
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  server.unref();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state, server };
}

t.test('a client that goes away aborts the upstream call', async (t) => {
  const up = await endlessUpstream(t, Buffer.from('data: {"tick":1}\n\n'), 20);
  const gw = await startGateway(t);
  const controller = new AbortController();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: { 'content-type': 'application/json', 'x-gateway-custom-host': `${up.url}/v1` },
    body: chatBody('abort me'),
  });
  const reader = res.body!.getReader();
  await reader.read();
  const abortedAt = performance.now();
  controller.abort();
  for (let i = 0; i < 100 && up.state.closedAt === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.ok(up.state.closedAt > 0, 'the upstream response was closed');
  t.ok(up.state.closedAt - abortedAt < 500, `within ${(up.state.closedAt - abortedAt).toFixed(0)} ms`);
});

t.test('backpressure: a client that stops reading stops the upstream', async (t) => {
  const up = await endlessUpstream(t, Buffer.alloc(64 * 1024, 'x'), 0);
  const gw = await startGateway(t);
  const { request } = await import('undici');
  const res = await request(`${gw.url}/v1/files/big/content`, { headers: { 'x-gateway-custom-host': `${up.url}/v1` } });
  t.equal(res.statusCode, 200);
  // Read nothing for a while: the upstream must stall once socket and stream buffers are full.
  await new Promise((r) => setTimeout(r, 400));
  const stalledAt = up.state.written;
  await new Promise((r) => setTimeout(r, 400));
  t.equal(up.state.written, stalledAt, `upstream stalled at ${(stalledAt / 1048576).toFixed(1)} MiB while the client paused`);
  t.ok(stalledAt < 64 * 1048576, 'bounded by buffers, not by memory');
  // Reading resumes the flow.
  let read = 0;
  for await (const chunk of res.body) {
    read += (chunk as Buffer).length;
    if (read > stalledAt + 4 * 1048576) break;
  }
  t.ok(up.state.written > stalledAt, 'the upstream resumed when the client read');
  res.body.destroy();
});
