/**
 * Pass-through: every other /v1 path goes to the provider base URL + the same path and query,
 * bodies untouched in both directions, over HTTP/1.1 and HTTP/2.
 */
import t from 'tap';
import http2 from 'node:http2';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'undici';
import { startGateway, startMock, direct } from './helpers/gateway.js';
import { mockFileContent } from '../bench/mock-upstream.js';

interface Echo {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body_sha256: string;
  body_length: number;
}

t.test('pass-through', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);

  t.test('a binary multipart upload arrives byte for byte', async (t) => {
    const boundary = '----gw' + randomBytes(8).toString('hex');
    const file = randomBytes(64 * 1024); // every byte value, including CR/LF and NUL
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="data.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await request(`${gw.url}/v1/files`, {
      method: 'POST',
      headers: { ...direct(mock), 'content-type': `multipart/form-data; boundary=${boundary}`, 'openai-beta': 'assistants=v2' },
      body,
    });
    t.equal(res.statusCode, 200);
    const echo = (await res.body.json()) as Echo;
    t.equal(echo.method, 'POST');
    t.equal(echo.path, '/v1/files');
    t.equal(echo.body_length, body.length);
    t.equal(echo.body_sha256, createHash('sha256').update(body).digest('hex'), 'the body is untouched');
    t.equal(echo.headers['content-type'], `multipart/form-data; boundary=${boundary}`);
    t.equal(echo.headers['openai-beta'], 'assistants=v2', 'ordinary client headers are forwarded');
    t.equal(mock.requests.at(-1)!.body.equals(body), true);
  });

  t.test('DELETE with a query string keeps path and query', async (t) => {
    const res = await request(`${gw.url}/v1/files/file-abc123?force=true&tag=a%20b`, { method: 'DELETE', headers: direct(mock) });
    t.equal(res.statusCode, 200);
    const echo = (await res.body.json()) as Echo;
    t.equal(echo.method, 'DELETE');
    t.equal(echo.path, '/v1/files/file-abc123');
    t.equal(echo.query, 'force=true&tag=a%20b');
    t.equal(res.headers['x-gateway-provider'], 'openai');
  });

  t.test('a binary response comes back as received', async (t) => {
    const res = await request(`${gw.url}/v1/files/file-1/content`, { headers: direct(mock) });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['content-type'], 'application/octet-stream');
    const bytes = Buffer.from(await res.body.arrayBuffer());
    t.ok(bytes.equals(mockFileContent()), 'identical bytes');
  });

  t.test('hop-by-hop and x-gateway-* headers are stripped', async (t) => {
    const res = await request(`${gw.url}/v1/models`, {
      method: 'PUT',
      headers: { ...direct(mock), 'x-gateway-metadata': '{"a":"b"}', 'x-custom': 'kept', te: 'trailers', 'proxy-authorization': 'secret' },
      body: 'plain text body',
    });
    const echo = (await res.body.json()) as Echo;
    t.equal(echo.method, 'PUT');
    t.equal(echo.headers['x-custom'], 'kept');
    t.notOk(echo.headers['x-gateway-metadata']);
    t.notOk(echo.headers['x-gateway-provider']);
    t.notOk(echo.headers['proxy-authorization']);
    t.notOk(echo.headers['te']);
  });

  t.test('PATCH on a /v1 path is 405 in the error shape', async (t) => {
    const res = await request(`${gw.url}/v1/files/x`, { method: 'PATCH', headers: direct(mock), body: '{}' });
    t.equal(res.statusCode, 405);
    t.equal(res.headers['x-gateway-error-source'], 'gateway');
    t.same(((await res.body.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  });

  t.test('HTTP/2 (prior knowledge): model route and pass-through on one connection', async (t) => {
    const session = http2.connect(gw.url);
    t.teardown(() => session.close());
    const call = (headers: http2.OutgoingHttpHeaders, body?: string): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }> =>
      new Promise((resolve, reject) => {
        const stream = session.request(headers);
        const chunks: Buffer[] = [];
        let head: http2.IncomingHttpHeaders = {};
        stream.on('response', (h) => (head = h));
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(chunks).toString() }));
        stream.on('error', reject);
        stream.end(body);
      });
    const [chat, passthrough] = await Promise.all([
      call(
        { ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', ...direct(mock) },
        JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'over h2' }] }),
      ),
      call({ ':method': 'GET', ':path': '/v1/models?limit=2', ...direct(mock) }),
    ]);
    t.equal(chat.status, 200);
    t.equal((JSON.parse(chat.body) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, 'Mock reply to: over h2');
    t.equal(chat.headers['x-gateway-provider'], 'openai');
    t.ok(chat.headers['x-gateway-request-id']);
    t.equal(passthrough.status, 200);
    t.match(JSON.parse(passthrough.body), { object: 'list' });

    const streamed = await call(
      { ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', ...direct(mock) },
      JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'h2 stream' }] }),
    );
    t.equal(streamed.headers['content-type'], 'text/event-stream');
    t.match(streamed.body, /data: \[DONE\]\n\n$/);
  });
});
