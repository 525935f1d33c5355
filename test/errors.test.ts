/**
 * Bad input and failed upstreams: a clear 4xx/5xx in the one error shape with a stable code,
 * never a crash, never a secret echoed back.
 */
import t from 'tap';
import net from 'node:net';
import { request } from 'undici';
import { startGateway, startMock, direct } from './helpers/gateway.js';

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

const SECRET = 'sk-live-SECRET-0123456789abcdef';

/** Sends raw bytes on a fresh connection and returns everything the server answered. */
function rawExchange(port: number, payload: string | Buffer, waitMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (c) => (data += c.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', () => resolve(data));
    socket.setTimeout(waitMs, () => socket.destroy());
    if (payload.length > 0) socket.write(payload);
  });
}

t.test('gateway errors', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, body_limit: 4kb, headers_timeout: 500, max_header_size: 2048}\n' });
  const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] });

  async function call(headers: Record<string, string>, body: string | Buffer, path = '/v1/chat/completions') {
    const res = await request(`${gw.url}${path}`, { method: 'POST', headers, body });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text, json: JSON.parse(text) as ErrorBody };
  }
  const json = { 'content-type': 'application/json' };

  const cases: Array<{ name: string; headers: Record<string, string>; body: string | Buffer; path?: string; status: number; code: string; param?: string }> = [
    { name: 'malformed JSON', headers: { ...direct(mock), ...json }, body: `{"model": ${SECRET}`, status: 400, code: 'invalid_json' },
    { name: 'invalid UTF-8', headers: { ...direct(mock), ...json }, body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), status: 400, code: 'invalid_encoding' },
    { name: 'a JSON array instead of an object', headers: { ...direct(mock), ...json }, body: '[1,2]', status: 400, code: 'invalid_body' },
    { name: 'wrong content type', headers: { ...direct(mock), 'content-type': 'text/plain' }, body: chat, status: 415, code: 'unsupported_content_type', param: 'content-type' },
    { name: 'body over the limit', headers: { ...direct(mock), ...json }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }), status: 413, code: 'body_too_large' },
    { name: 'a validation bound', headers: { ...direct(mock), ...json }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], n: 200 }), status: 400, code: 'value_above_maximum', param: 'n' },
    { name: 'no provider', headers: { ...json, authorization: `Bearer ${SECRET}` }, body: chat, status: 400, code: 'missing_provider' },
    { name: 'unknown provider', headers: { ...json, 'x-gateway-provider': 'nope' }, body: chat, status: 400, code: 'unknown_provider', param: 'x-gateway-provider' },
    { name: 'cloud metadata custom host', headers: { ...json, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': 'http://169.254.169.254/latest' }, body: chat, status: 400, code: 'invalid_custom_host', param: 'x-gateway-custom-host' },
    { name: 'private-range custom host', headers: { ...json, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': 'http://10.1.2.3/v1' }, body: chat, status: 400, code: 'invalid_custom_host' },
    { name: 'credentials in the custom host', headers: { ...json, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `http://user:${SECRET}@127.0.0.1/v1` }, body: chat, status: 400, code: 'invalid_custom_host' },
    { name: 'metadata that is not an object', headers: { ...direct(mock), ...json, 'x-gateway-metadata': '[1]' }, body: chat, status: 400, code: 'invalid_header', param: 'x-gateway-metadata' },
    { name: 'a bad request timeout', headers: { ...direct(mock), ...json, 'x-gateway-request-timeout': 'soon' }, body: chat, status: 400, code: 'invalid_header', param: 'x-gateway-request-timeout' },
    { name: 'an unknown route', headers: json, body: '{}', path: '/nothing-here', status: 404, code: 'route_not_found' },
    { name: 'an unreachable upstream', headers: { ...json, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': 'http://127.0.0.1:9/v1' }, body: chat, status: 502, code: 'upstream_unreachable' },
    { name: 'an upstream that answers too late', headers: { ...direct(mock, 'delay=2000'), ...json, 'x-gateway-request-timeout': '200' }, body: chat, status: 504, code: 'upstream_timeout' },
  ];
  for (const c of cases) {
    t.test(c.name, async (t) => {
      const res = await call(c.headers, c.body, c.path);
      t.equal(res.status, c.status);
      t.equal(res.json.error.code, c.code);
      if (c.param) t.equal(res.json.error.param, c.param);
      t.equal(res.headers['x-gateway-error-source'], 'gateway');
      t.ok(res.headers['x-gateway-request-id'], 'errors carry the request id');
      t.notMatch(res.text, SECRET, 'no secret in the answer');
    });
  }

  t.test('a body that came whole with its head, or in pieces: forwarded as sent, bounded alike', async (t) => {
    const head = (extra: string): string => {
      const h = direct(mock);
      return `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nx-gateway-provider: ${h['x-gateway-provider']}\r\nx-gateway-custom-host: ${h['x-gateway-custom-host']}\r\nAuthorization: ${h.authorization}\r\n${extra}\r\n`;
    };
    const chunked = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;
    // Chunked (no content-length to refuse up front), in one write: Node has the message whole.
    const small = await rawExchange(gw.port, head('Transfer-Encoding: chunked\r\n') + chunked(chat));
    t.match(small, /^HTTP\/1\.1 200 /);
    t.equal(mock.requests.at(-1)!.body.toString(), chat, 'the bytes sent, forwarded');
    const big = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
    const refused = await rawExchange(gw.port, head('Transfer-Encoding: chunked\r\n') + chunked(big));
    t.match(refused, /^HTTP\/1\.1 413 /);
    t.match(refused, /"code":"body_too_large"/);
    // The head first, the body 50 ms later in two pieces: read as it comes.
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(gw.port, '127.0.0.1');
      let data = '';
      socket.on('data', (c) => (data += c.toString()));
      socket.on('close', () => resolve(data));
      socket.write(head(`Content-Length: ${Buffer.byteLength(chat)}\r\n`));
      setTimeout(() => socket.write(chat.slice(0, 10)), 50);
      setTimeout(() => socket.write(chat.slice(10)), 100);
    });
    t.match(answer, /^HTTP\/1\.1 200 /);
    t.equal(mock.requests.at(-1)!.body.toString(), chat, 'a body in pieces, forwarded whole');
  });

  t.test('a slow client gets 408 and is closed', async (t) => {
    const started = Date.now();
    const answer = await rawExchange(gw.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    t.match(answer, /^HTTP\/1\.1 408 /);
    t.match(answer, /"code":"request_timeout"/);
    t.ok(Date.now() - started < 2500, 'answered near the headers timeout');
  });

  t.test('oversized headers get 431', async (t) => {
    const answer = await rawExchange(gw.port, `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4000)}\r\n\r\n`);
    t.match(answer, /^HTTP\/1\.1 431 /);
    t.match(answer, /"code":"headers_too_large"/);
  });

  t.test('garbage instead of HTTP gets 400', async (t) => {
    const answer = await rawExchange(gw.port, '\x16\x03\x01 not http at all\r\n\r\n');
    t.match(answer, /^HTTP\/1\.1 400 /);
  });

  t.test('a client that connects and says nothing is dropped', async (t) => {
    const started = Date.now();
    const answer = await rawExchange(gw.port, '', 5000);
    t.equal(answer, '');
    t.ok(Date.now() - started < 2000, 'closed after the headers timeout');
  });

  t.test('the process survived all of it', async (t) => {
    const res = await request(`${gw.url}/health`);
    t.equal(res.statusCode, 200);
    t.same(await res.body.json(), { status: 'ok' });
    const logged = JSON.stringify(gw.logs);
    t.notMatch(logged, SECRET, 'no secret in the logs');
  });
});
