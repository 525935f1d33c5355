/**
 * TLS: one port serves h2 and http/1.1, chosen by ALPN. The certificate is a self-signed test
 * fixture (test/fixtures/tls), valid for localhost and 127.0.0.1.
 */
import t from 'tap';
import http2 from 'node:http2';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startGateway, startMock, direct } from './helpers/gateway.js';

const fixtures = fileURLToPath(new URL('../../test/fixtures/tls/', import.meta.url));
const ca = readFileSync(`${fixtures}cert.pem`);
const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'over tls' }] });

t.test('TLS with ALPN', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `server: {host: 127.0.0.1, port: 0, tls: {cert: ${fixtures}cert.pem, key: ${fixtures}key.pem}}\n`,
  });
  t.match(gw.url, /^https:\/\//);

  t.test('h2', async (t) => {
    const session = http2.connect(gw.url, { ca });
    t.teardown(() => session.close());
    await new Promise<void>((r) => session.once('connect', () => r()));
    t.equal(session.alpnProtocol, 'h2');
    const stream = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', ...direct(mock) });
    stream.end(body);
    let status = 0;
    let text = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    for await (const chunk of stream) text += (chunk as Buffer).toString();
    t.equal(status, 200);
    t.match(text, /Mock reply to: over tls/);
  });

  t.test('http/1.1', async (t) => {
    const { status, text, alpn } = await new Promise<{ status: number; text: string; alpn: string | false | null }>((resolve, reject) => {
      const req = https.request(
        `${gw.url}/v1/chat/completions`,
        { method: 'POST', agent: new https.Agent({ ca, ALPNProtocols: ['http/1.1'] }), headers: { 'content-type': 'application/json', ...direct(mock) } },
        (res) => {
          const alpn = (res.socket as import('node:tls').TLSSocket).alpnProtocol;
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, alpn }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    t.equal(alpn, 'http/1.1');
    t.equal(status, 200);
    t.match(text, /Mock reply to: over tls/);
  });
});
