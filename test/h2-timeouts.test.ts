/**
 * HTTP/2 slow clients: `request_timeout` and `headers_timeout` hold per stream and per session, as
 * they do for HTTP/1.1 (regression: 20 slow-body h2c streams were still open at 45 s with a
 * 15 s request_timeout, while HTTP/1.1 clients got 408 at 15.8 s). Long streamed responses whose
 * request is complete are never cut.
 */
import t from 'tap';
import net from 'node:net';
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { definePlugin } from '../core/plugin.js';
import { startGateway, startMock, direct, type MockUpstream } from './helpers/gateway.js';

const REQUEST_TIMEOUT = 600;
const fixtures = fileURLToPath(new URL('../../test/fixtures/tls/', import.meta.url));

interface StreamResult {
  status: number;
  text: string;
  rstCode: number | undefined;
  requestId: string | undefined;
}

/** Opens a POST stream that sends `first` and then nothing (unless `end`), and collects what comes back. */
function post(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, first: string, end = false): Promise<StreamResult> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'POST', 'content-type': 'application/json', ...headers });
    let status = 0;
    let text = '';
    let requestId: string | undefined;
    stream.on('response', (h) => {
      status = Number(h[':status']);
      requestId = h['x-gateway-request-id'] as string | undefined;
    });
    stream.on('data', (c: Buffer) => (text += c.toString()));
    stream.on('error', () => undefined); // a reset is an outcome here, recorded below
    stream.on('close', () => resolve({ status, text, rstCode: stream.rstCode, requestId }));
    if (end) stream.end(first);
    else stream.write(first);
  });
}

function connect(url: string, options: http2.SecureClientSessionOptions = {}): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(url, options);
  session.on('error', () => undefined);
  return new Promise((resolve) => session.once('connect', () => resolve(session)));
}

/** A plugin whose onRequest hook never lets the request reach the body reader (until released). */
function stallPlugin() {
  let release = (): void => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const plugin = definePlugin({
    name: 'stall',
    setup: () => ({
      onRequest: (ctx) => (ctx.headers['x-test-stall'] === '1' ? gate : undefined),
    }),
  });
  return { plugin, release: () => release() };
}

t.test('h2c: slow clients per stream', async (t) => {
  const mock: MockUpstream = await startMock(t);
  const stall = stallPlugin();
  const gw = await startGateway(t, {
    yaml: `server: {host: 127.0.0.1, port: 0, request_timeout: ${REQUEST_TIMEOUT}, headers_timeout: ${REQUEST_TIMEOUT}}\npipeline:\n  - stall\n`,
    plugins: { stall: stall.plugin as never },
  });
  const path = { ':path': '/v1/chat/completions' };

  t.test('regression: 20 slow-body streams each get 408 near request_timeout; the session stays usable', async (t) => {
    const session = await connect(gw.url);
    t.teardown(() => session.destroy());
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 20 }, () => post(session, { ...path, ...direct(mock) }, '{"model":')));
    const elapsed = Date.now() - started;
    for (const r of results) {
      t.equal(r.status, 408);
      t.equal((JSON.parse(r.text) as { error: { code: string } }).error.code, 'request_timeout');
    }
    t.ok(elapsed < REQUEST_TIMEOUT * 2.5, `all 20 answered and closed within the bound (${elapsed} ms)`);
    t.notOk(session.destroyed, 'the session itself is still open');
    const ok = await post(session, { ...path, ...direct(mock) }, JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), true);
    t.equal(ok.status, 200, 'a normal request on the same session still works');
    t.match(ok.text, /Mock reply to: hi/);
    for (const r of results) {
      t.ok(r.requestId, 'the 408 went through the normal path (it carries the request id)');
      t.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR, 'then the stream was reset with NO_ERROR, so the client stops sending');
    }
  });

  t.test('a long streamed response outlives request_timeout once its request is complete', async (t) => {
    const session = await connect(gw.url);
    t.teardown(() => session.destroy());
    const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'stream me' }] });
    const started = Date.now();
    const r = await post(session, { ...path, ...direct(mock, `chunks=6;chunk_delay=${REQUEST_TIMEOUT / 2}`) }, body, true);
    t.ok(Date.now() - started > REQUEST_TIMEOUT * 2, 'the stream ran past the request timeout');
    t.equal(r.status, 200);
    t.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR, 'ended normally, not reset');
    t.match(r.text, /data: \[DONE\]/);
  });

  t.test('backstop: a stream whose body nobody reads gets 408 and a reset', async (t) => {
    const session = await connect(gw.url);
    t.teardown(() => session.destroy());
    const r = await post(session, { ...path, ...direct(mock), 'x-test-stall': '1' }, '{"model":');
    t.equal(r.status, 408);
    t.equal((JSON.parse(r.text) as { error: { code: string } }).error.code, 'request_timeout');
    t.equal(r.requestId, undefined, 'answered by the listener, not the pipeline');
    stall.release(); // the stalled handler now finds its stream gone and must end quietly
    await new Promise((r) => setTimeout(r, 100));
    t.notOk(gw.logs.some((l) => l.msg === 'request handler failed'), 'the late handler did not fail');
  });

  t.test('a session that never completes the headers of a first stream is cut after headers_timeout', async (t) => {
    const closed = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(gw.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.resume();
      socket.on('close', () => resolve(Date.now() - started));
      // The preface and an empty SETTINGS frame, then nothing: no stream ever starts.
      socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
      socket.setTimeout(10_000, () => socket.destroy());
    });
    t.ok(closed < 5000, `closed by the server (${closed} ms), long before the idle timeout`);
  });

  t.test('the process is healthy afterwards', async (t) => {
    const res = await fetch(`${gw.url}/health`);
    t.equal(res.status, 200);
  });
});

t.test('TLS h2: slow-body streams get 408 too', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `server: {host: 127.0.0.1, port: 0, request_timeout: ${REQUEST_TIMEOUT}, tls: {cert: ${fixtures}cert.pem, key: ${fixtures}key.pem}}\n`,
  });
  const session = await connect(gw.url, { ca: readFileSync(`${fixtures}cert.pem`) });
  t.teardown(() => session.destroy());
  const results = await Promise.all(Array.from({ length: 5 }, () => post(session, { ':path': '/v1/chat/completions', ...direct(mock) }, '{"model":')));
  for (const r of results) t.equal(r.status, 408);
  const ok = await post(session, { ':path': '/v1/chat/completions', ...direct(mock) }, JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'tls' }] }), true);
  t.equal(ok.status, 200);
});
