/**
 * The `responses-store` plugin: translated Responses answers are kept per workspace, so
 * `previous_response_id` continues a conversation on any provider (Anthropic, Gemini, Bedrock,
 * and OpenAI, which gets it expanded), `GET /v1/responses/{id}` and `/input_items` read it back,
 * `DELETE` removes it, another workspace never sees it, `store: false` keeps nothing, ids the
 * gateway does not hold go to the provider, and kept responses expire. The official OpenAI SDK
 * drives a real gateway against the mock providers.
 */
import t from 'tap';
import OpenAI from 'openai';
import { request } from 'undici';
import { MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY } from '../bench/mock/sigv4.js';
import { Scopes } from '../core/index.js';
import { openLogDb } from '../plugins/logging/log-db.js';
import { ResponseRecords } from '../plugins/responses-store/records.js';
import { ADMIN_KEY, addWorkspace, startGateway, startMock, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type ApiError = { status: number; error: unknown };

const TARGETS: Record<string, { model: string; headers(mock: MockUpstream): Record<string, string> }> = {
  anthropic: { model: 'claude-sonnet-4', headers: (mock) => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1` }) },
  google: { model: 'gemini-2.5-flash', headers: (mock) => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': `${mock.url}/v1beta` }) },
  bedrock: {
    model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
    headers: (mock) => ({
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': mock.url,
      'x-gateway-aws-region': 'us-west-2',
      'x-gateway-aws-access-key-id': MOCK_AWS_ACCESS_KEY_ID,
      'x-gateway-aws-secret-access-key': MOCK_AWS_SECRET_ACCESS_KEY,
    }),
  },
  openai: { model: 'gpt-4o-mini', headers: (mock) => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1` }) },
};

interface Setup {
  gw: StartedGateway;
  mock: MockUpstream;
  a: { id: string; key: string };
  b: { id: string; key: string };
  client(target: string, key?: string): OpenAI;
}

async function setup(t: Teardown, extra = ''): Promise<Setup> {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `pipeline:\n  - logging: {flush_ms: 20}\n  - auth\n  - responses-store${extra}\n  - admin-catalog\n`,
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const a = addWorkspace(gw.store, 'ws-a', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const b = addWorkspace(gw.store, 'ws-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const client = (target: string, key = a.key) =>
    new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-provider', maxRetries: 0, timeout: 10_000, defaultHeaders: { ...TARGETS[target]!.headers(mock), 'x-gateway-api-key': key } });
  return { gw, mock, a, b, client };
}

/** The chat-shaped turns a provider received, as (role, text) pairs, whatever its dialect. */
function turns(body: Json): Array<[string, string]> {
  if (Array.isArray(body.contents)) return body.contents.map((c: Json) => [c.role === 'model' ? 'assistant' : c.role, c.parts.map((p: Json) => p.text ?? '').join('')]);
  if (Array.isArray(body.input)) return body.input.map((i: Json) => [i.role, typeof i.content === 'string' ? i.content : i.content.map((p: Json) => p.text).join('')]);
  return body.messages.map((m: Json) => [m.role, typeof m.content === 'string' ? m.content : m.content.map((p: Json) => p.text ?? '').join('')]);
}

const lastBody = (mock: MockUpstream): Json => JSON.parse(mock.requests.at(-1)!.body.toString()) as Json;

for (const target of ['anthropic', 'google', 'bedrock']) {
  t.test(`${target}: previous_response_id, GET, input_items, DELETE`, async (t) => {
    const { mock, client } = await setup(t);
    const model = TARGETS[target]!.model;
    const r1 = await client(target).responses.create({ model, instructions: 'Be brief.', input: 'My name is Ada' });
    t.equal((r1 as unknown as Json).store, true, 'kept by default');

    const r2 = await client(target).responses.create({ model, previous_response_id: r1.id, input: 'What is my name?' });
    t.equal(r2.previous_response_id, r1.id, 'the response names the one it continues');
    t.same(turns(lastBody(mock)), [
      ['user', 'My name is Ada'],
      ['assistant', 'Mock reply to: My name is Ada'],
      ['user', 'What is my name?'],
    ], 'the provider got the whole conversation (instructions are not carried over)');

    const read = await client(target).responses.retrieve(r1.id);
    t.same(read, r1, 'GET returns the response as it was answered');
    const listed = await client(target).responses.inputItems.list(r2.id);
    t.equal(listed.data.length, 1, 'input_items lists the call\'s own input');
    t.match(listed.data[0], { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is my name?' }] });
    t.match(listed.data[0]!.id, /^msg_/);

    // A streamed turn is kept too, and the chain goes on from it.
    const stream = client(target).responses.stream({ model, previous_response_id: r2.id, input: 'And my age?' });
    for await (const _ of stream);
    const r3 = await stream.finalResponse();
    t.equal(turns(lastBody(mock)).length, 5, 'the streamed call got all five turns');
    const read3 = await client(target).responses.retrieve(r3.id);
    t.equal(read3.output_text, r3.output_text, 'a streamed response is kept');
    t.same(read3.usage, r3.usage);
    t.equal(read3.previous_response_id, r2.id);

    const before = mock.requests.length;
    const deleted = await client(target).responses.delete(r1.id).then(() => 'ok', (e: unknown) => e);
    t.equal(deleted, 'ok', 'DELETE answers');
    t.equal(mock.requests.length, before, 'answered by the gateway');
    await client(target).responses.retrieve(r1.id).catch(() => undefined);
    t.match(mock.requests.at(-1)!.path, new RegExp(`/responses/${r1.id}$`), 'a deleted id is no longer held: the provider is asked');
  });
}

t.test('one conversation across providers, OpenAI included', async (t) => {
  const { mock, client } = await setup(t);
  const r1 = await client('anthropic').responses.create({ model: TARGETS.anthropic!.model, input: 'Remember 42' });
  const r2 = await client('google').responses.create({ model: TARGETS.google!.model, previous_response_id: r1.id, input: 'What number?' });
  t.same(turns(lastBody(mock)), [['user', 'Remember 42'], ['assistant', 'Mock reply to: Remember 42'], ['user', 'What number?']], 'Gemini continues what Anthropic answered');

  await client('openai').responses.create({ model: 'gpt-4o-mini', previous_response_id: r2.id, input: 'Sure?' });
  const sent = lastBody(mock);
  t.equal(mock.requests.at(-1)!.path, '/v1/responses', 'OpenAI gets the Responses call natively');
  t.notOk('previous_response_id' in sent, 'without an id OpenAI could not know');
  t.same(turns(sent), [
    ['user', 'Remember 42'],
    ['assistant', 'Mock reply to: Remember 42'],
    ['user', 'What number?'],
    ['assistant', 'Mock reply to: What number?'],
    ['user', 'Sure?'],
  ], 'but with the conversation expanded into input');
  t.notOk(JSON.stringify(sent.input).includes('"id"'), 'the gateway\'s item ids are left out');
});

t.test('a conversation OpenAI made natively continues on another provider, and on OpenAI natively', async (t) => {
  const { mock, client, b } = await setup(t);
  const r1 = await client('openai').responses.create({ model: 'gpt-4o-mini', input: 'Remember 7' });
  t.equal(mock.requests.at(-1)!.path, '/v1/responses', 'made natively by OpenAI');

  // A fallback or a switch to Anthropic: the gateway's copy carries the conversation over.
  const r2 = await client('anthropic').responses.create({ model: TARGETS.anthropic!.model, previous_response_id: r1.id, input: 'Which number?' });
  t.same(turns(lastBody(mock)), [['user', 'Remember 7'], ['assistant', 'Mock reply to: Remember 7'], ['user', 'Which number?']], 'Anthropic continues what OpenAI answered');
  t.match(r2, { previous_response_id: r1.id });

  // Back on OpenAI with its own id: forwarded untouched (OpenAI keeps state the items cannot carry).
  await client('openai').responses.create({ model: 'gpt-4o-mini', previous_response_id: r1.id, input: 'Again?' });
  const native = lastBody(mock);
  t.equal(native.previous_response_id, r1.id, 'OpenAI gets its own id');
  t.equal(native.input, 'Again?', 'and only the new input');

  // A streamed native answer is kept too (from its response.completed event).
  const stream = await client('openai').responses.create({ model: 'gpt-4o-mini', input: 'Stream 9', stream: true });
  let streamedId = '';
  for await (const event of stream) if (event.type === 'response.completed') streamedId = event.response.id;
  await client('google').responses.create({ model: TARGETS.google!.model, previous_response_id: streamedId, input: 'Go on' });
  t.same(turns(lastBody(mock)).slice(0, 2), [['user', 'Stream 9'], ['assistant', 'Mock reply to: Stream 9']], 'a streamed OpenAI answer continues on Gemini');

  // Reads and deletes of a native id stay OpenAI's; another workspace cannot continue it elsewhere.
  await client('openai').responses.retrieve(r1.id);
  t.equal(mock.requests.at(-1)!.path, `/v1/responses/${r1.id}`, 'GET goes to OpenAI');
  const other = await client('anthropic', b.key).responses.create({ model: TARGETS.anthropic!.model, previous_response_id: r1.id, input: 'x' }).catch((e: unknown) => e);
  t.equal((other as ApiError).status, 404, "another workspace does not reach this workspace's copy");
  await client('openai').responses.delete(r1.id);
  t.equal(mock.requests.at(-1)!.path, `/v1/responses/${r1.id}`, 'DELETE goes to OpenAI');
  const gone = await client('anthropic').responses.create({ model: TARGETS.anthropic!.model, previous_response_id: r1.id, input: 'x' }).catch((e: unknown) => e);
  t.equal((gone as ApiError).status, 404, 'and drops the copy');

  // store:false on OpenAI: nothing kept, so nothing to continue elsewhere.
  const unkept = await client('openai').responses.create({ model: 'gpt-4o-mini', input: 'Not kept', store: false });
  const refused = await client('anthropic').responses.create({ model: TARGETS.anthropic!.model, previous_response_id: unkept.id, input: 'x' }).catch((e: unknown) => e);
  t.match((refused as ApiError).error, { code: 'previous_response_not_found' });
});

t.test('workspaces, store:false, unknown ids', async (t) => {
  const { gw, mock, client, a, b } = await setup(t);
  const model = TARGETS.anthropic!.model;
  const r1 = await client('anthropic').responses.create({ model, input: 'Secret of workspace A' });

  const before = mock.requests.length;
  const read = await client('anthropic', b.key).responses.retrieve(r1.id).catch((e: unknown) => e);
  t.equal((read as ApiError).status, 404, 'another workspace gets 404');
  t.match((read as ApiError).error, { code: 'response_not_found' });
  const items = await client('anthropic', b.key).responses.inputItems.list(r1.id).catch((e: unknown) => e);
  t.equal((items as ApiError).status, 404, 'for input_items too');
  const deleted = await client('anthropic', b.key).responses.delete(r1.id).catch((e: unknown) => e);
  t.equal((deleted as ApiError).status, 404, 'and cannot delete it');
  t.equal(mock.requests.length, before, 'the provider is not asked about another workspace\'s id');
  const continued = await client('anthropic', b.key).responses.create({ model, previous_response_id: r1.id, input: 'Tell me' }).catch((e: unknown) => e);
  t.equal((continued as ApiError).status, 404, 'nor can it continue the conversation');
  t.match((continued as ApiError).error, { code: 'previous_response_not_found' });
  t.ok(await client('anthropic').responses.retrieve(r1.id), 'the owner still reads it');

  const unkept = await client('anthropic').responses.create({ model, input: 'Forget me', store: false });
  t.equal((unkept as unknown as Json).store, false);
  await client('anthropic').responses.retrieve(unkept.id).catch(() => undefined);
  t.equal(mock.requests.at(-1)!.path, `/v1/responses/${unkept.id}`, 'store:false keeps nothing: the id goes to the provider');
  const notKept = await client('anthropic').responses.create({ model, input: 'x', previous_response_id: unkept.id }).catch((e: unknown) => e);
  t.equal((notKept as ApiError).status, 404);

  // A store:false call still continues a kept conversation.
  await client('anthropic').responses.create({ model, input: 'Continue', previous_response_id: r1.id, store: false });
  t.equal(turns(lastBody(mock)).length, 3);

  const bad = await request(`${gw.url}/v1/responses/${r1.id}/input_items?limit=500`, { headers: { 'x-gateway-api-key': a.key } });
  t.equal(bad.statusCode, 400, 'a bad input_items query is a 400');
  t.match(await bad.body.json(), { error: { code: 'invalid_query_parameter', param: 'limit' } });
  const replay = await request(`${gw.url}/v1/responses/${r1.id}?stream=true`, { headers: { 'x-gateway-api-key': a.key } });
  t.equal(replay.statusCode, 400, 'a kept response is not replayed as a stream');
  t.match(await replay.body.json(), { error: { code: 'unsupported_parameter', param: 'stream' } });
});

t.test('usage and cost of a translated Responses call are in its log record', async (t) => {
  const { gw, mock, client } = await setup(t);
  const model = TARGETS.anthropic!.model;
  const plain = await client('anthropic').responses.create({ model, input: 'Log me' }).withResponse();
  const stream = await client('anthropic').responses.create({ model, input: 'Log me', stream: true }).withResponse();
  for await (const _ of stream.data);
  await new Promise((r) => setTimeout(r, 150));
  await gw.store.flush();
  const records = [...openLogDb(gw.store.root).getRange()].map((e) => e.value);
  for (const [name, answered] of [['plain', plain.response], ['stream', stream.response]] as const) {
    const record = records.find((r) => r.id === answered.headers.get('x-gateway-request-id'));
    t.ok(record, `${name}: logged`);
    t.match(record, { route: 'responses', status: 200, provider: 'anthropic' });
    t.equal(record!.usage?.source, 'upstream', `${name}: the upstream's usage`);
    t.equal(record!.usage?.prompt_tokens, plain.data.usage!.input_tokens, `${name}: input tokens`);
    t.equal(record!.usage?.completion_tokens, plain.data.usage!.output_tokens, `${name}: output tokens`);
    t.ok(record!.cost_cents > 0, `${name}: priced (${record!.cost_cents} cents as ${record!.priced_as})`);
  }
  t.ok(mock.requests.every((r) => !r.path.includes('responses')), 'all of it went to Anthropic');
});

t.test('kept responses expire', async (t) => {
  // 0.00002 days: about 1.7 seconds.
  const { gw, mock, client } = await setup(t, ': {retention_days: 0.00002}');
  const r1 = await client('anthropic').responses.create({ model: TARGETS.anthropic!.model, input: 'Short-lived' });
  t.ok(await client('anthropic').responses.retrieve(r1.id), 'held while fresh');
  await new Promise((r) => setTimeout(r, 1900));
  await client('anthropic').responses.retrieve(r1.id).catch(() => undefined);
  t.equal(mock.requests.at(-1)!.path, `/v1/responses/${r1.id}`, 'expired: no longer held');

  const records = new ResponseRecords(gw.store);
  await gw.store.flush();
  t.equal(await records.sweep(), 1, 'the sweep removes the expired record');
  t.equal(await records.sweep(), 0, 'once');
  t.equal(records.find(r1.id, 0), undefined, 'gone from the database');
});

t.test('size bounds: a large response is not kept, a long conversation is refused', async (t) => {
  const { mock, client } = await setup(t, ': {max_record_bytes: 4096, max_conversation_bytes: 4096}');
  const model = TARGETS.anthropic!.model;
  const big = await client('anthropic').responses.create({ model, input: 'x'.repeat(5000) });
  await client('anthropic').responses.retrieve(big.id).catch(() => undefined);
  t.equal(mock.requests.at(-1)!.path, `/v1/responses/${big.id}`, 'a response over max_record_bytes is not kept');

  let previous = (await client('anthropic').responses.create({ model, input: 'Turn 0' })).id;
  let refused: ApiError | undefined;
  let turnsDone = 0;
  for (let i = 1; i < 10 && refused === undefined; i++) {
    const next = await client('anthropic').responses.create({ model, input: `Turn ${i}`, previous_response_id: previous }).catch((e: unknown) => e);
    if (next instanceof OpenAI.APIError) refused = next as unknown as ApiError;
    else {
      previous = (next as OpenAI.Responses.Response).id;
      turnsDone++;
    }
  }
  t.ok(turnsDone >= 2, `${turnsDone} turns continued before the bound`);
  t.equal(refused?.status, 400, 'then the conversation is refused, not silently cut');
  t.match(refused?.error, { code: 'conversation_too_large', param: 'previous_response_id' });
});
