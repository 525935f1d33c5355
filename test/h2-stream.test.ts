/**
 * HTTP/2 served on the core stream API (no compatibility layer): what a client sees over h2c and
 * h2 (TLS) for whole answers, event streams, pings, failures after the head, body limits, a client
 * that goes away, `expect: 100-continue`, connection-specific headers, the liveness probe and
 * draining with GOAWAY; and the outcome each request reports to `onDone`.
 */
import t from 'tap';
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startGateway, startMock, direct, type MockUpstream } from './helpers/gateway.js';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';
import type { Outcome } from '../core/context.js';
import { reply } from '../core/reply.js';

const fixtures = fileURLToPath(new URL('../../test/fixtures/tls/', import.meta.url));
const ca = readFileSync(`${fixtures}cert.pem`);

interface H2Result {
  status: number;
  headers: http2.IncomingHttpHeaders;
  text: string;
  rstCode: number | undefined;
  /** 1xx heads seen before the answer. */
  informational: number[];
}

function call(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string | Buffer, onData?: (text: string, stream: http2.ClientHttp2Stream) => void): Promise<H2Result> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    const result: H2Result = { status: 0, headers: {}, text: '', rstCode: undefined, informational: [] };
    stream.on('headers', (h) => result.informational.push(Number(h[':status'])));
    stream.on('response', (h) => {
      result.status = Number(h[':status']);
      result.headers = h;
    });
    stream.on('data', (chunk: Buffer) => {
      result.text += chunk.toString();
      onData?.(result.text, stream);
    });
    stream.on('error', () => {}); // a reset is reported through rstCode
    stream.on('close', () => resolve({ ...result, rstCode: stream.rstCode }));
    session.once('error', reject);
    if (body !== undefined) stream.end(body);
  });
}

function connect(url: string, options: http2.SecureClientSessionOptions = {}): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(url, options);
  return new Promise((resolve, reject) => {
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

const chat = (content: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ model: 'm', messages: [{ role: 'user', content }], ...extra });

function chatHeaders(mock: MockUpstream, directives = ''): http2.OutgoingHttpHeaders {
  return { ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', ...direct(mock, directives) };
}

/** Records every request's outcome and address; `/h2test/*` routes answer with odd replies. */
function recorder(): { plugin: PluginDefinition<never>; outcomes: Outcome[]; addresses: string[]; waitFor: (n: number) => Promise<void> } {
  const outcomes: Outcome[] = [];
  const addresses: string[] = [];
  const waiters: Array<() => void> = [];
  const plugin = definePlugin({
    name: 'recorder',
    setup: () => ({
      onDone: (ctx, outcome) => {
        outcomes.push(outcome);
        addresses.push(ctx.remoteAddress);
        for (const w of waiters.splice(0)) w();
      },
      routes: [
        // A reply carrying headers HTTP/2 forbids: they are dropped, the answer goes through.
        { method: 'GET', path: '/h2test/hop', handler: () => reply(200, { ok: true }, { connection: 'keep-alive', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked', 'x-kept': 'yes' }) },
        // A raw body that fails after its first chunk: the head is out, the answer must look cut.
        {
          method: 'GET',
          path: '/h2test/broken',
          handler: () =>
            reply(
              200,
              (async function* () {
                yield Buffer.from('partial ');
                await new Promise((r) => setTimeout(r, 20));
                throw new Error('the body source broke');
              })(),
              { 'content-type': 'application/octet-stream' },
            ),
        },
        { method: 'GET', path: '/h2test/empty', handler: () => reply(204) },
      ],
    }),
  }) as PluginDefinition<never>;
  const waitFor = async (n: number): Promise<void> => {
    while (outcomes.length < n) await new Promise<void>((r) => waiters.push(r));
  };
  return { plugin, outcomes, addresses, waitFor };
}

t.test('h2c on the stream API', async (t) => {
  const mock = await startMock(t);
  const rec = recorder();
  const gw = await startGateway(t, {
    yaml: 'server: {host: 127.0.0.1, port: 0, body_limit: 2kb, stream_ping_interval: 50ms}\npipeline: [recorder]\n',
    plugins: { recorder: rec.plugin },
  });
  const session = await connect(gw.url);
  t.teardown(() => session.close());

  t.test('a whole answer: status, body, gateway headers, date; its outcome is not aborted', async (t) => {
    const before = rec.outcomes.length;
    const r = await call(session, chatHeaders(mock), chat('whole'));
    t.equal(r.status, 200);
    t.match(JSON.parse(r.text), { choices: [{ message: { content: 'Mock reply to: whole' } }] });
    t.type(r.headers['x-gateway-request-id'], 'string');
    t.match(r.headers['server-timing'], /gateway;dur=/);
    t.type(r.headers['date'], 'string', 'a date header, as HTTP/1.1 sends');
    t.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    await rec.waitFor(before + 1);
    t.equal(rec.outcomes[before]!.aborted, false, 'a complete answer is not reported as a client gone away');
    t.equal(rec.outcomes[before]!.status, 200);
    t.equal(rec.addresses[before], '127.0.0.1', 'the peer address reaches the context');
  });

  t.test('an event stream arrives whole and ends normally', async (t) => {
    const before = rec.outcomes.length;
    const r = await call(session, chatHeaders(mock, 'chunks=5;chunk_delay=5'), chat('stream me', { stream: true }));
    t.equal(r.status, 200);
    t.match(r.headers['content-type'], /text\/event-stream/);
    const deltas = [...r.text.matchAll(/^data: (\{.*\})$/gm)].map((m) => (JSON.parse(m[1]!) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content ?? '');
    t.equal(deltas.join(''), 'Mock reply to: stream me', 'every event arrived, in order');
    t.match(r.text, /data: \[DONE\]\n\n$/);
    t.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    await rec.waitFor(before + 1);
    t.equal(rec.outcomes[before]!.aborted, false);
  });

  t.test('pings go out while the upstream is silent, then the events follow', async (t) => {
    const r = await call(session, chatHeaders(mock, 'first_byte_delay=300;chunks=2'), chat('slow start', { stream: true }));
    t.equal(r.status, 200);
    t.match(r.text, /^: ping\n\n/, 'the stream opened with a ping before the upstream answered');
    t.match(r.text, /data: \[DONE\]\n\n$/);
  });

  t.test('a client that resets mid-stream aborts the request', async (t) => {
    const before = rec.outcomes.length;
    const r = await call(session, chatHeaders(mock, 'chunks=50;chunk_delay=20'), chat('bye', { stream: true }), (text, stream) => {
      if (/^data: \{/m.test(text) && !stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
    });
    t.equal(r.rstCode, http2.constants.NGHTTP2_CANCEL);
    await rec.waitFor(before + 1);
    t.equal(rec.outcomes[before]!.aborted, true, 'onDone sees the client gone');
  });

  t.test('a body that fails after the head resets the stream with INTERNAL_ERROR', async (t) => {
    const r = await call(session, { ':method': 'GET', ':path': '/h2test/broken' });
    t.equal(r.status, 200);
    t.equal(r.text, 'partial ');
    t.equal(r.rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR, 'not a clean end: the client cannot take the cut answer for a whole one');
  });

  t.test('a declared body over the limit: 413, then a NO_ERROR reset', async (t) => {
    const r = await call(session, { ...chatHeaders(mock), 'content-length': '5000' }, Buffer.alloc(5000, 0x20));
    t.equal(r.status, 413);
    t.equal(JSON.parse(r.text).error.code, 'body_too_large');
    t.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
  });

  t.test('an undeclared body that grows over the limit: 413', async (t) => {
    const r = await call(session, chatHeaders(mock), Buffer.alloc(5000, 0x20));
    t.equal(r.status, 413);
    t.equal(JSON.parse(r.text).error.code, 'body_too_large');
  });

  t.test('expect: 100-continue gets a 100, then the answer', async (t) => {
    const r = await call(session, { ...chatHeaders(mock), expect: '100-continue' }, chat('continue'));
    t.same(r.informational, [100]);
    t.equal(r.status, 200);
    t.match(r.text, /Mock reply to: continue/);
  });

  t.test('an unknown expectation: 417', async (t) => {
    const r = await call(session, { ...chatHeaders(mock), expect: 'something-else' }, chat('x'));
    t.equal(r.status, 417);
  });

  t.test('connection-specific headers of a reply are dropped, the rest arrives', async (t) => {
    const r = await call(session, { ':method': 'GET', ':path': '/h2test/hop' });
    t.equal(r.status, 200);
    t.equal(r.headers['x-kept'], 'yes');
    t.equal(r.headers['connection'], undefined);
    t.equal(r.headers['keep-alive'], undefined);
    t.same(JSON.parse(r.text), { ok: true });
  });

  t.test('a 204 ends with its head', async (t) => {
    const r = await call(session, { ':method': 'GET', ':path': '/h2test/empty' });
    t.equal(r.status, 204);
    t.equal(r.text, '');
    t.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
  });

  t.test('the liveness probe', async (t) => {
    const r = await call(session, { ':method': 'GET', ':path': '/health' });
    t.equal(r.status, 200);
    t.same(JSON.parse(r.text), { status: 'ok' });
  });

  t.test('unknown routes keep the error shape', async (t) => {
    const r = await call(session, { ':method': 'POST', ':path': '/nowhere' }, '{}');
    t.equal(r.status, 404);
    t.equal(JSON.parse(r.text).error.code, 'route_not_found');
  });
});

t.test('h2 over TLS (ALPN) and HTTP/1.1 on the same port', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `server: {host: 127.0.0.1, port: 0, headers_timeout: 300ms, request_timeout: 2s, tls: {cert: ${fixtures}cert.pem, key: ${fixtures}key.pem}}\n`,
  });

  t.test('h2: an answer and an event stream on one session', async (t) => {
    const session = await connect(gw.url, { ca });
    t.teardown(() => session.close());
    t.equal(session.alpnProtocol, 'h2');
    const [whole, events] = await Promise.all([
      call(session, chatHeaders(mock), chat('tls whole')),
      call(session, chatHeaders(mock, 'chunks=3;chunk_delay=5'), chat('tls stream', { stream: true })),
    ]);
    t.equal(whole.status, 200);
    t.match(whole.text, /Mock reply to: tls whole/);
    t.equal(events.status, 200);
    t.match(events.text, /data: \[DONE\]\n\n$/);
  });

  t.test('a client offering no ALPN speaks HTTP/1.1', async (t) => {
    const { status, text, alpn } = await new Promise<{ status: number; text: string; alpn: string | false | null }>((resolve, reject) => {
      const req = https.request(`${gw.url}/health`, { ca, agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, alpn: (res.socket as tls.TLSSocket).alpnProtocol }));
      });
      req.on('error', reject);
      req.end();
    });
    t.equal(alpn, false);
    t.equal(status, 200);
    t.same(JSON.parse(text), { status: 'ok' });
  });

  t.test('HTTP/1.1 over TLS: a client too slow with its headers gets 408, as on cleartext', async (t) => {
    const socket = tls.connect({ host: '127.0.0.1', port: gw.port, ca, ALPNProtocols: ['http/1.1'], servername: 'localhost' });
    t.teardown(() => socket.destroy());
    await new Promise<void>((r) => socket.once('secureConnect', () => r()));
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\n');
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    await new Promise<void>((r) => socket.once('close', () => r()));
    t.match(text, /^HTTP\/1\.1 408 /);
    t.match(text, /"code":"request_timeout"/);
  });
});

t.test('draining: GOAWAY, the stream in flight finishes', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, shutdown_grace: 5s}\n' });
  const session = await connect(gw.url);
  t.teardown(() => session.destroy());
  const goaway = new Promise<number>((r) => session.once('goaway', (code: number) => r(code)));
  const inflight = call(session, chatHeaders(mock, 'delay=300'), chat('finish me'));
  await new Promise((r) => setTimeout(r, 100));
  const closing = gw.close();
  t.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR, 'the session got a GOAWAY');
  const r = await inflight;
  t.equal(r.status, 200);
  t.match(r.text, /Mock reply to: finish me/);
  await closing;
});
