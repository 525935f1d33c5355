/**
 * A 2xx model answer that is not JSON (an HTML page a proxy put in front of the provider): the
 * client gets the provider's bytes unchanged, the log record says `upstream_invalid_response`
 * and is not a success, and `/metrics` counts it per provider. A JSON answer is none of these.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, direct, ADMIN_KEY } from './helpers/gateway.js';
import { HTML_PAGE } from '../bench/mock/server.js';
import { openLogDb } from '../plugins/logging/log-db.js';

const PIPELINE = 'pipeline:\n  - logging: {flush_ms: 20}\n  - metrics\n  - auth\n';
const CHAT = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function invalidCount(text: string, provider: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`gateway_upstream_invalid_responses_total{provider="${provider}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

t.test('html answer on a model route: forwarded unchanged, logged upstream_invalid_response, counted', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const headers = { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY };
  const chat = async (directives: string): Promise<{ status: number; type: unknown; bytes: Buffer; id: string }> => {
    const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', body: CHAT, headers: { ...headers, ...direct(mock, directives) } });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, type: res.headers['content-type'], bytes, id: String(res.headers['x-gateway-request-id']) };
  };

  const html = await chat('html');
  t.equal(html.status, 200, 'the provider status is kept');
  t.match(String(html.type), /^text\/html/, 'and its content type');
  t.ok(html.bytes.equals(Buffer.from(HTML_PAGE)), 'the forwarded bytes are identical to what the provider sent');

  const good = await chat('');
  t.equal(good.status, 200);

  const db = openLogDb(gw.store.root);
  // The first estimate starts the token counter, so records may take a moment to be written.
  for (let i = 0; i < 100 && (db.get(html.id) === undefined || db.get(good.id) === undefined); i++) {
    await sleep(50);
    await gw.store.flush();
  }
  const bad = db.get(html.id);
  t.ok(bad, 'the html answer has a record');
  t.equal(bad?.error_code, 'upstream_invalid_response');
  t.equal(bad?.is_success, false, 'not a success');
  t.equal(bad?.status, 200, 'the status the client saw');
  const ok = db.get(good.id);
  t.equal(ok?.error_code, null, 'a JSON answer carries no error code');
  t.equal(ok?.is_success, true);

  const metrics = await (await request(`${gw.url}/metrics`)).body.text();
  t.equal(invalidCount(metrics, 'openai'), 1, 'the invalid answer is counted once, under its provider');
});
