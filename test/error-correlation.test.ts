/**
 * Error correlation: every error answer carries `x-request-id`, so the OpenAI SDK's
 * `err.requestID` names the request in the gateway's logs. A gateway-made error carries the
 * gateway's request id (the same as `x-gateway-request-id`); a proxied upstream error keeps the
 * upstream's own `x-request-id` when it sent one, and gets the gateway's when it did not.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startGateway, startMock, sdk } from './helpers/gateway.js';

type ApiError = InstanceType<typeof OpenAI.APIError>;

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof OpenAI.APIError)) throw new Error(`expected an APIError, got ${String(err)}`);
  return err;
}

t.test('gateway errors carry the gateway request id as x-request-id', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);

  // A validation error (400) seen through the SDK.
  const invalid = await failure(sdk(gw, mock).chat.completions.create({ model: 'm', messages: 'not a list' as never }));
  t.equal(invalid.status, 400);
  const gatewayId = invalid.headers?.get('x-gateway-request-id');
  t.ok(gatewayId, 'the gateway id is on the answer');
  t.equal(invalid.requestID, gatewayId, 'err.requestID is the gateway request id');

  // No provider named (400 missing_provider).
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-x', maxRetries: 0 });
  const missing = await failure(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
  t.equal((missing.error as { code?: string }).code, 'missing_provider');
  t.equal(missing.requestID, missing.headers?.get('x-gateway-request-id'));
  t.not(missing.requestID, gatewayId, 'each request has its own id');

  // An upstream that cannot be reached (502, made by the gateway).
  const down = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-x', maxRetries: 0, defaultHeaders: { 'x-gateway-custom-host': 'http://127.0.0.1:1/v1' } });
  const unreachable = await failure(down.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
  t.equal(unreachable.status, 502);
  t.equal(unreachable.requestID, unreachable.headers?.get('x-gateway-request-id'));

  // Outside the model routes: an unknown path (404) and a wrong method (405).
  for (const [method, path, status] of [
    ['GET', '/nowhere', 404],
    ['PATCH', '/v1/chat/completions', 405],
  ] as const) {
    const res = await fetch(`${gw.url}${path}`, { method });
    t.equal(res.status, status, `${method} ${path}`);
    t.equal(res.headers.get('x-request-id'), res.headers.get('x-gateway-request-id'), `${method} ${path} carries the id`);
    t.equal(res.headers.get('x-gateway-error-source'), 'gateway');
  }

  // A success carries only x-gateway-request-id; x-request-id is the upstream's.
  const ok = await sdk(gw, mock).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  t.match(ok.response.headers.get('x-request-id'), /^req_/, 'a success keeps the upstream id');
});

t.test('proxied upstream errors keep their own x-request-id, or get the gateway one', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);

  // The mock sends its own x-request-id with every answer.
  const upstream = await failure(sdk(gw, mock, 'status=429').chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
  t.equal(upstream.status, 429);
  t.match(upstream.requestID, /^req_/, "the upstream's id is kept");
  t.not(upstream.requestID, upstream.headers?.get('x-gateway-request-id'));
  t.equal(upstream.headers?.get('x-gateway-error-source'), 'upstream');

  // An upstream without its own id.
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error', param: null, code: null } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const bare = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'sk-x',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-custom-host': `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` },
  });
  const anonymous = await failure(bare.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
  t.equal(anonymous.status, 500);
  t.equal(anonymous.headers?.get('x-gateway-error-source'), 'upstream');
  t.equal(anonymous.requestID, anonymous.headers?.get('x-gateway-request-id'), 'the gateway id fills in');

  // Translated (Anthropic provider): the provider's error still names a request.
  const claude = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-ant', maxRetries: 0, defaultHeaders: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/mock/status=529/v1` } });
  const translated = await failure(claude.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'hi' }] }));
  t.equal(translated.status, 529);
  t.ok(translated.requestID, 'a translated error carries an id too');
});
