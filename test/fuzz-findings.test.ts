/**
 * Regressions for the defects the fuzz suite (test/fuzz-*.test.ts) found outside issue 11's list,
 * one test per defect, each a fixed request instead of a generated one:
 * - a custom log nested thousands deep was a 500 (the scrubber's JSON.stringify overflowed);
 * - 404s of the logging routes echoed the id from the path;
 * - the Anthropic ingress and the Bedrock translator echoed caller-chosen `type` values;
 * - the mock upstream died of a RangeError when its reply echoed a deeply nested field.
 */
import t from 'tap';
import { request } from 'undici';
import { ADMIN_KEY, addWorkspace, direct, startGateway, startMock } from './helpers/gateway.js';
import { STANDARD_YAML } from './helpers/fuzz.js';

const SECRET = 'CANARY_0badc0de';
const deep = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

async function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string; source: unknown }> {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.statusCode, text: await res.body.text(), source: res.headers['x-gateway-error-source'] };
}

t.test('a custom log nested 20,000 deep is a 400 invalid_body, not a 500', async (t) => {
  const gw = await startGateway(t, { yaml: STANDARD_YAML, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const log = `{"request":{"url":"https://api.example.com/v1/chat/completions","method":"POST","body":${deep(20_000)}},"response":{"status":200,"body":{}}}`;
  const res = await post(`${gw.url}/v1/logs`, { 'x-gateway-api-key': ADMIN_KEY }, log);
  t.equal(res.status, 400);
  t.equal(JSON.parse(res.text).error.code, 'invalid_body');
  const shallow = `{"request":{"url":"https://api.example.com/v1/chat/completions","method":"POST","body":${deep(100)}},"response":{"status":200,"body":{}}}`;
  const team = addWorkspace(gw.store, 'team', ['logs.write']);
  t.equal((await post(`${gw.url}/v1/logs`, { 'x-gateway-api-key': team.key }, shallow)).status, 200, 'a body 100 deep is still taken');
});

t.test('404s of the logging routes do not echo the id from the path', async (t) => {
  const gw = await startGateway(t, { yaml: STANDARD_YAML, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  for (const [method, path] of [
    ['GET', `/v1/logs/${SECRET}`],
    ['GET', `/v1/logs/exports/${SECRET}`],
    ['POST', `/v1/logs/exports/${SECRET}/start`],
    ['POST', `/v1/logs/exports/${SECRET}/cancel`],
    ['GET', `/v1/logs/exports/${SECRET}/download`],
  ] as const) {
    const res = await request(`${gw.url}${path}`, { method, headers: { 'x-gateway-api-key': ADMIN_KEY } });
    const text = await res.body.text();
    t.equal(res.statusCode, 404, `${method} ${path}`);
    t.equal(JSON.parse(text).error.code, 'not_found');
    t.notOk(text.includes(SECRET), `${method} ${path} does not echo the id`);
  }
});

t.test('the Anthropic ingress does not echo a caller-chosen content block or tool type', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: STANDARD_YAML, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const headers = { 'x-gateway-api-key': ADMIN_KEY, ...direct(mock) };
  const message = (content: unknown, extra: object = {}): string =>
    JSON.stringify({ model: 'claude-3-5-sonnet-latest', max_tokens: 16, messages: [{ role: 'user', content }], ...extra });

  const block = await post(`${gw.url}/v1/messages`, headers, message([{ type: SECRET }]));
  t.equal(block.status, 400);
  t.match(JSON.parse(block.text).error, { code: 'unsupported_parameter', param: 'messages[0].content[0]' });
  t.notOk(block.text.includes(SECRET), 'an unknown block type is not echoed');

  const known = await post(`${gw.url}/v1/messages`, headers, message([{ type: 'container_upload', file_id: 'f' }]));
  t.equal(known.status, 400);
  t.match(JSON.parse(known.text).error, { code: 'unsupported_parameter', param: 'messages[0].content[0]' }, 'a known block type the provider cannot take names the field');

  const tool = await post(`${gw.url}/v1/messages`, headers, message('hi', { tools: [{ type: SECRET, name: 'x' }] }));
  t.equal(tool.status, 400);
  t.match(JSON.parse(tool.text).error, { code: 'unsupported_parameter', param: 'tools[0]' });
  t.notOk(tool.text.includes(SECRET), 'a server tool type is not echoed');
  t.equal(mock.requests.length, 0, 'nothing reached the upstream');
});

t.test('the Bedrock translator does not echo a caller-chosen part, image or tool type', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: STANDARD_YAML, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const headers = {
    'x-gateway-api-key': ADMIN_KEY,
    'x-gateway-provider': 'bedrock',
    'x-gateway-custom-host': mock.url,
    'x-gateway-aws-region': 'us-east-1',
    authorization: 'Bearer bedrock-api-key-0001',
  };
  const image = { type: 'image_url', image_url: { url: `data:image/${SECRET};base64,Qk0=` } };
  for (const body of [
    { model: 'm', messages: [{ role: 'user', content: [image] }] },
    { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: SECRET, function: { name: 'f' } }] },
  ]) {
    const res = await post(`${gw.url}/v1/chat/completions`, headers, JSON.stringify(body));
    t.equal(res.status, 400);
    t.equal(res.source, 'gateway');
    t.notOk(res.text.includes(SECRET), `not echoed: ${JSON.parse(res.text).error.param}`);
  }
});

t.test('the mock upstream answers a reply too deep to serialise with a 400 instead of dying', async (t) => {
  const mock = await startMock(t);
  const body = `{"model":"gpt-4o-mini","input":"hi","text":{"format":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
  const res = await post(`${mock.url}/v1/responses`, { authorization: 'Bearer sk-test' }, body);
  t.equal(res.status, 400);
  t.equal(JSON.parse(res.text).error.type, 'invalid_request_error');
  t.equal((await post(`${mock.url}/v1/responses`, { authorization: 'Bearer sk-test' }, '{"model":"gpt-4o-mini","input":"hi"}')).status, 200, 'the mock still serves');
});
