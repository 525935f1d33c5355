/**
 * The guardrails engine end to end with a plugin's own checks (`defineCheck` through the
 * `guardrails` service): deny before the call, redaction in the client's dialect, whole answers
 * and streams (a span split across events), async checks that really run, fail-closed errors,
 * inheritance in nested configs, results in the header and the log record.
 */
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { request } from 'undici';
import { definePlugin, defineCheck, type Finding } from '../core/index.js';
import { startGateway, startMock, sdk, direct, ADMIN_KEY, addWorkspace, type MockUpstream, type Teardown } from './helpers/gateway.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';
import { uuidv7 } from '../core/store/ids.js';
import type { Store } from '../core/store/store.js';

const EMAIL = /[a-z0-9.]+@[a-z0-9]+\.[a-z]{2,}/g;

/** A span check: every email-like span (a test's own, so this file does not lean on the built-ins). */
const emails = defineCheck<Record<string, never>>({
  id: 'test.email',
  description: 'emails',
  parameters: { type: 'object', additionalProperties: false },
  find(text) {
    const out: Finding[] = [];
    for (const m of text.matchAll(EMAIL)) out.push({ start: m.index, end: m.index + m[0].length, label: 'EMAIL' });
    return out;
  },
  maxMatch: () => 64,
});

/** A whole-text check: at most `max` characters. */
const maxLen = defineCheck<{ max: number }>({
  id: 'test.maxLen',
  description: 'length bound',
  parameters: { type: 'object', properties: { max: { type: 'integer', minimum: 0 } }, required: ['max'], additionalProperties: false },
  run: (ctx, p) => ({ verdict: ctx.text.length <= p.max, data: { length: ctx.text.length } }),
});

let slowRuns = 0;
/** An async check that takes its time; counts its runs. */
const slow = defineCheck<{ ms: number; verdict?: boolean }>({
  id: 'test.slow',
  description: 'slow',
  parameters: { type: 'object', properties: { ms: { type: 'integer' }, verdict: { type: 'boolean' } }, required: ['ms'] },
  run: async (_ctx, p) => {
    await new Promise((r) => setTimeout(r, p.ms));
    slowRuns++;
    return { verdict: p.verdict ?? true };
  },
});

const broken = defineCheck<Record<string, never>>({
  id: 'test.broken',
  description: 'throws',
  parameters: { type: 'object' },
  run: () => {
    throw new Error('boom');
  },
});

const checks = definePlugin({
  name: 'test-checks',
  setup(app) {
    const g = app.service('guardrails');
    for (const c of [emails, maxLen, slow, broken]) g.register(c);
  },
});

async function gateway(t: Teardown, mock: MockUpstream) {
  const gw = await startGateway(t, {
    yaml: 'pipeline: [logging, auth, config-strategy, guardrails, test-checks, admin-resources]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'test-checks': checks },
  });
  void mock;
  return gw;
}

function client(gw: { url: string }, mock: MockUpstream, config: unknown, directives = ''): OpenAI {
  return sdk(gw as never, mock, directives, { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': JSON.stringify(config) });
}

const leaf = (mock: MockUpstream, directives = '') => ({ provider: 'openai', custom_host: direct(mock, directives)['x-gateway-custom-host'] });

t.test('deny before the call: 446 with hook_results, no upstream request', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const before = mock.requests.length;
  const c = client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'test.email': {}, deny: true, id: 'no-email' }] });
  const err = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'mail me at jo@example.com' }] }).catch((e: unknown) => e);
  t.ok(err instanceof OpenAI.APIError, 'the SDK raises an APIError');
  const e = err as InstanceType<typeof OpenAI.APIError>;
  t.equal(e.status, 446);
  const results = (e.error as { hook_results?: { before_request_hooks: Array<{ id: string; verdict: boolean }> } }).hook_results;
  t.equal(results?.before_request_hooks[0]?.id, 'no-email');
  t.equal(results?.before_request_hooks[0]?.verdict, false);
  t.equal(mock.requests.length, before, 'nothing reached the upstream');
});

/** The log record of a request, once the writer flushed it. */
async function logOf(gw: { url: string }, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const res = await request(`${gw.url}/v1/logs/${id}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    const body = (await res.body.json()) as Record<string, unknown>;
    if (res.statusCode === 200) return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no log record ${id}`);
}

function lastBody(mock: MockUpstream): Record<string, unknown> {
  return JSON.parse(mock.requests[mock.requests.length - 1]!.body.toString('utf8')) as Record<string, unknown>;
}

t.test('redact: the request reaches the model without the span, in its own dialect; results in the header and the log', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const c = client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'test.email': {}, redact: true, id: 'scrub' }] });
  const { data, response } = await c.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'admin is root@corp.io' }, { role: 'user', content: [{ type: 'text', text: 'write to jo@example.com' }] }] })
    .withResponse();
  const sent = lastBody(mock) as { messages: Array<{ content: unknown }> };
  t.equal(sent.messages[0]!.content, 'admin is [EMAIL]');
  t.same(sent.messages[1]!.content, [{ type: 'text', text: 'write to [EMAIL]' }]);
  t.notMatch(JSON.stringify(sent), /example\.com|corp\.io/, 'no email left in what the upstream saw');
  t.match(data.choices[0]!.message.content, /\[EMAIL\]/, 'the answer quotes the redacted prompt');
  t.equal(response.headers.get('x-gateway-guardrails'), 'passed=1; failed=0');
  const log = await logOf(gw, response.headers.get('x-gateway-request-id')!);
  const g = log.guardrails as { verdict: string; redacted: number; results: { before_request_hooks: Array<{ id: string }> } };
  t.equal(g.verdict, 'passed');
  t.equal(g.redacted, 2);
  t.equal(g.results.before_request_hooks[0]!.id, 'scrub');
  t.notMatch(JSON.stringify(log), /example\.com|corp\.io/, 'the log record carries no matched text');
});

t.test('whole answers: output redaction rewrites the answer, a failed check without deny passes with its results', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const c = client(gw, mock, { ...leaf(mock), output_guardrails: [{ 'test.email': {}, redact: true }, { 'test.maxLen': { max: 5 }, id: 'short' }] });
  const { data, response } = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping ann@mail.org' }] }).withResponse();
  t.equal(data.choices[0]!.message.content, 'Mock reply to: ping [EMAIL]');
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-gateway-guardrails'), 'passed=1; failed=1; failed_ids=short');
});

t.test('whole answers: deny on output is a 446 and the answer never reaches the client', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const c = client(gw, mock, { ...leaf(mock), output_guardrails: [{ 'test.email': {}, deny: true }] });
  const err = (await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping ann@mail.org' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(err.status, 446);
  t.notMatch(JSON.stringify(err.error), /mail\.org/);
  t.equal((err.error as { code: string }).code, 'guardrail_denied');
});

/** The content of a stream read with the SDK, and its error. */
async function readStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<{ text: string; pieces: number; error: unknown }> {
  let text = '';
  let pieces = 0;
  try {
    for await (const chunk of stream) {
      const c = chunk.choices[0]?.delta.content;
      if (c) {
        text += c;
        pieces++;
      }
    }
  } catch (error) {
    return { text, pieces, error };
  }
  return { text, pieces, error: undefined };
}

t.test('streams: an email split across many events is redacted; the rest flows', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  // 30 events for ~40 characters: the address is cut into pieces of one or two characters.
  const c = client(gw, mock, { ...leaf(mock, 'chunks=30'), output_guardrails: [{ 'test.email': {}, redact: true }] });
  const stream = await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi zed@mail.org and more text after it' }] });
  const { text, error } = await readStream(stream);
  t.equal(error, undefined);
  t.equal(text, 'Mock reply to: hi [EMAIL] and more text after it');
});

t.test('streams: deny on a span ends the stream with the error event before the span is sent', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const c = client(gw, mock, { ...leaf(mock, 'chunks=30'), output_guardrails: [{ 'test.email': {}, deny: true, id: 'no-mail' }] });
  const stream = await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi zed@mail.org and more' }] });
  const { text, error } = await readStream(stream);
  t.ok(error instanceof Error, 'the SDK sees the error event');
  t.notMatch(text, /zed|mail\.org/, 'no part of the address was sent');
  t.match(String((error as Error).message), /guardrail/);
});

t.test('streams: whole-text checks run at the end; deny there ends the stream with the error event', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const c = client(gw, mock, { ...leaf(mock, 'chunks=4'), output_guardrails: [{ 'test.maxLen': { max: 10 }, deny: true }] });
  const stream = await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a longer prompt' }] });
  const { text, error } = await readStream(stream);
  t.equal(text, 'Mock reply to: a longer prompt', 'what was sent stays sent');
  t.ok(error instanceof Error, 'then the error event');
});

t.test('async guardrails really run after the response, and their verdict is in the log', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  slowRuns = 0;
  const c = client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'test.slow': { ms: 150, verdict: false }, async: true, deny: true, id: 'later' }] });
  const started = Date.now();
  const { response } = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }).withResponse();
  t.equal(response.status, 200, 'an async deny does not stop the answer');
  t.ok(Date.now() - started < 1000);
  const log = await logOf(gw, response.headers.get('x-gateway-request-id')!);
  t.equal(slowRuns, 1, 'the check ran');
  const g = log.guardrails as { verdict: string; results: { before_request_hooks: Array<{ id: string; async: boolean; verdict: boolean }> } };
  t.same(g.results.before_request_hooks.map((o) => [o.id, o.async, o.verdict]), [['later', true, false]]);
});

t.test('a check that throws fails closed, unless on_error: allow', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const closed = client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'test.broken': {}, deny: true }] });
  const err = (await closed.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(err.status, 446);
  const check = (err.error as { hook_results: { before_request_hooks: Array<{ checks: Array<{ error?: string }> }> } }).hook_results.before_request_hooks[0]!.checks[0]!;
  t.match(check.error, /boom/);
  const open = client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'test.broken': {}, deny: true, on_error: 'allow' }] });
  const ok = await open.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }).withResponse();
  t.equal(ok.response.status, 200);
});

t.test('nested configs: a child replaces its parent\'s list, defaults are appended at every leaf', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const config = {
    strategy: { mode: 'fallback' },
    input_guardrails: [{ 'test.maxLen': { max: 1000 }, id: 'parent' }],
    default_input_guardrails: [{ 'test.maxLen': { max: 2000 }, id: 'default' }],
    targets: [
      { ...leaf(mock, 'status=500'), input_guardrails: [{ 'test.email': {}, redact: true, id: 'child' }] },
      { ...leaf(mock) },
    ],
  };
  const c = client(gw, mock, config);
  mock.requests.length = 0;
  const { response } = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'to a@b.io' }] }).withResponse();
  t.equal(response.status, 200);
  // The first leaf (redacting child) failed upstream; the second (parent's list) sent the text as is.
  const bodies = mock.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { messages: Array<{ content: string }> });
  t.equal(bodies[0]!.messages[0]!.content, 'to [EMAIL]', 'the child leaf redacted');
  t.equal(bodies[bodies.length - 1]!.messages[0]!.content, 'to a@b.io', 'the parent\'s list does not redact');
  const log = await logOf(gw, response.headers.get('x-gateway-request-id')!);
  const ids = (log.guardrails as { results: { before_request_hooks: Array<{ id: string }> } }).results.before_request_hooks.map((o) => o.id);
  t.same(ids.sort(), ['child', 'default', 'default', 'parent'].sort());
});

t.test('the Anthropic dialect: redaction writes back in Messages shape, a deny is an error the SDK reads', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const headers = { 'x-gateway-api-key': ADMIN_KEY };
  const anthropic = (config: unknown) =>
    new Anthropic({ baseURL: gw.url, apiKey: 'sk-ant-test', maxRetries: 0, defaultHeaders: { ...headers, 'x-gateway-config': JSON.stringify(config) } });
  const target = { provider: 'anthropic', custom_host: `${mock.url}/v1` };
  const msg = await anthropic({ ...target, input_guardrails: [{ 'test.email': {}, redact: true }] }).messages.create({
    model: 'claude-3-5-haiku-latest',
    max_tokens: 32,
    system: [{ type: 'text', text: 'ops: op@corp.io' }],
    messages: [{ role: 'user', content: 'mail q@x.org' }],
  });
  const sent = lastBody(mock) as { system: Array<{ text: string }>; messages: Array<{ content: string }> };
  t.equal(sent.system[0]!.text, 'ops: [EMAIL]');
  t.equal(sent.messages[0]!.content, 'mail [EMAIL]');
  t.match((msg.content[0] as { text: string }).text, /\[EMAIL\]/);
  const err = await anthropic({ ...target, input_guardrails: [{ 'test.email': {}, deny: true }] })
    .messages.create({ model: 'claude-3-5-haiku-latest', max_tokens: 32, messages: [{ role: 'user', content: 'mail q@x.org' }] })
    .catch((e: unknown) => e);
  t.ok(err instanceof Anthropic.APIError);
  t.equal((err as InstanceType<typeof Anthropic.APIError>).status, 446);
  t.match(JSON.stringify((err as InstanceType<typeof Anthropic.APIError>).error), /hook_results/);
});

/** A saved guardrail written straight into the store. */
function saveGuardrail(store: Store, workspaceId: string, slug: string, checks: Array<Record<string, unknown>>): void {
  const now = new Date().toISOString();
  store.c.guardrails.insert({
    id: uuidv7(),
    slug,
    name: slug,
    organisation_id: store.meta.get('organisation_id') as string,
    workspace_id: workspaceId,
    checks,
    version_id: uuidv7(),
    status: 'active',
    owner_id: null,
    updated_by: null,
    created_at: now,
    last_updated_at: now,
  });
}

t.test('guardrails attached to a workspace and to a key apply to every request, and saved ones are found by slug in configs', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const store = gw.store;
  const team = addWorkspace(store, 'team-g', DEFAULT_WORKSPACE_SCOPES);
  saveGuardrail(store, team.id, 'gr-scrub', [{ 'test.email': {}, redact: true }]);
  saveGuardrail(store, team.id, 'gr-short', [{ 'test.maxLen': { max: 20 }, deny: true }]);
  const call = (key: string, content: string) =>
    new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': key, ...direct(mock) } }).chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
      .withResponse();

  // The workspace: every request is scrubbed.
  store.c.workspaces.update(team.id, (w) => ({ ...w, defaults: { ...w.defaults, input_guardrails: ['gr-scrub'] } }));
  await call(team.key, 'to a@b.io');
  t.equal((lastBody(mock) as { messages: Array<{ content: string }> }).messages[0]!.content, 'to [EMAIL]');

  // A key of the workspace adds its own: a long prompt is denied for it.
  const keyId = store.c.apiKeys.list({ index: 'workspace', value: team.id }).items[0]!.id;
  // (last_updated_at is what invalidates the key's cached principal, as the admin API sets it.)
  store.c.apiKeys.update(keyId, (k) => ({ ...k, defaults: { ...k.defaults, input_guardrails: ['gr-short'] }, last_updated_at: new Date(Date.now() + 1000).toISOString() }));
  const denied = (await call(team.key, 'a prompt longer than twenty characters').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(denied.status, 446);

  // Saved guardrails by slug inside an inline config, and an unknown one is a 400 naming it.
  const c = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': team.key } });
  const withConfig = (config: unknown) => c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, { headers: { 'x-gateway-config': JSON.stringify(config) } });
  store.c.apiKeys.update(keyId, (k) => ({ ...k, defaults: { ...k.defaults, input_guardrails: [] }, last_updated_at: new Date(Date.now() + 2000).toISOString() }));
  const unknown = (await withConfig({ ...leaf(mock), input_guardrails: ['gr-nope'] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(unknown.status, 400);
  t.equal((unknown.error as { code: string; param: string }).code, 'unknown_guardrail');
  t.equal((unknown.error as { param: string }).param, 'config.input_guardrails[0]');
  const bad = (await withConfig({ ...leaf(mock), input_guardrails: [{ 'test.maxLen': { max: -1 } }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(bad.status, 400);
  t.equal((bad.error as { param: string }).param, 'config.input_guardrails[0]["test.maxLen"].max');
  // Another workspace's guardrail is not found from this one.
  const other = addWorkspace(store, 'team-h', DEFAULT_WORKSPACE_SCOPES);
  saveGuardrail(store, other.id, 'gr-theirs', [{ 'test.maxLen': { max: 1 }, deny: true }]);
  const theirs = (await withConfig({ ...leaf(mock), input_guardrails: ['gr-theirs'] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal((theirs.error as { code: string }).code, 'unknown_guardrail');
});

t.test('every text route: completions, embeddings (input only), responses (plain and streamed)', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const scrubIn = { ...leaf(mock, 'chunks=20'), input_guardrails: [{ 'test.email': {}, redact: true }] };
  const scrubOut = { ...leaf(mock, 'chunks=20'), output_guardrails: [{ 'test.email': {}, redact: true }] };

  const completion = await client(gw, mock, scrubIn).completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: ['a@b.io says', 'hi'] });
  t.same((lastBody(mock) as { prompt: string[] }).prompt, ['[EMAIL] says', 'hi']);
  t.notMatch(completion.choices[0]!.text, /b\.io/);

  await client(gw, mock, scrubIn).embeddings.create({ model: 'text-embedding-3-small', input: 'mail c@d.io' });
  t.equal((lastBody(mock) as { input: string }).input, 'mail [EMAIL]');
  // Output guardrails do not touch embeddings (vectors are not text): the answer passes.
  const vectors = await client(gw, mock, scrubOut).embeddings.create({ model: 'text-embedding-3-small', input: 'x' });
  t.ok(vectors.data[0]!.embedding.length > 0);

  const r = await client(gw, mock, scrubIn).responses.create({ model: 'gpt-4o-mini', instructions: 'ops e@f.io', input: [{ role: 'user', content: [{ type: 'input_text', text: 'to g@h.io' }] }] });
  const sent = lastBody(mock) as { instructions: string; input: Array<{ content: Array<{ text: string }> }> };
  t.equal(sent.instructions, 'ops [EMAIL]');
  t.equal(sent.input[0]!.content[0]!.text, 'to [EMAIL]');
  t.match(r.output_text, /\[EMAIL\]/);

  const plain = await client(gw, mock, scrubOut).responses.create({ model: 'gpt-4o-mini', input: 'write to i@j.io please' });
  t.equal(plain.output_text, 'Mock reply to: write to [EMAIL] please');
  const stream = await client(gw, mock, scrubOut).responses.create({ model: 'gpt-4o-mini', input: 'write to i@j.io please', stream: true });
  let deltas = '';
  let completed = '';
  for await (const ev of stream) {
    if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    if (ev.type === 'response.completed') completed = ev.response.output_text ?? JSON.stringify(ev.response.output);
  }
  t.equal(deltas, 'Mock reply to: write to [EMAIL] please', 'the deltas are redacted');
  t.notMatch(completed, /j\.io/, 'and so is the completed response that repeats them');
});

t.test('a denied answer is not cached; feedback on_fail is recorded; /metrics counts checks by verdict', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [logging, metrics, auth, config-strategy, guardrails, test-checks, cache, admin-resources]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'test-checks': checks },
  });
  const config = { ...leaf(mock), cache: { mode: 'simple' }, output_guardrails: [{ 'test.email': {}, deny: true, id: 'no-mail', on_fail: { feedback: { value: -5, weight: 0.5 } } }] };
  const c = client(gw, mock, config);
  mock.requests.length = 0;
  for (let i = 0; i < 2; i++) {
    const err = (await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x@y.io' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    t.equal(err.status, 446, `request ${i + 1} denied`);
    t.equal(err.headers?.get('x-gateway-cache-status'), 'MISS');
  }
  t.equal(mock.requests.length, 2, 'both went upstream: the denied answer was not stored');

  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  t.match(metrics, /gateway_guardrail_checks_total\{check="test.email",phase="output",verdict="fail"\} 2/);
  t.match(metrics, /gateway_rejections_total\{reason="guardrail"\} 2/);

  // Feedback lands in the feedback store, on the request's trace, with the guardrail's value.
  const db = gw.store.root.openDB<{ trace_id: string; value: number; weight: number; metadata: Record<string, unknown> }, string>({ name: 'feedback' });
  let found: Array<{ value: number; weight: number; metadata: Record<string, unknown> }> = [];
  for (let i = 0; i < 50 && found.length < 2; i++) {
    found = [...db.getRange()].map((e) => e.value);
    if (found.length < 2) await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(found.length, 2);
  t.same(found.map((f) => [f.value, f.weight, f.metadata.guardrail_id]), [[-5, 0.5, 'no-mail'], [-5, 0.5, 'no-mail']]);
});

t.test('built-in checks end to end: PII and secrets redacted in a large prompt on the worker pool, regex deny, webhook rewrite', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [logging, auth, config-strategy, {guardrails: {worker_threshold: 4096}}, admin-resources]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const filler = 'The quarterly numbers for region 14 were reviewed on 2026-03-01 by the team. ';
  const big = `${filler.repeat(200)}contact ann@corp.io or +1 415 555 0100, card 4111 1111 1111 1111, key sk-proj-${'Ab3dE5fG7hJ9kL2mN4pQ6rS8tU0vW'}xyz. ${filler.repeat(200)}`;
  const c = client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'default.pii': {}, 'default.secrets': {}, redact: true }] });
  await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: big }] });
  const sent = (lastBody(mock) as { messages: Array<{ content: string }> }).messages[0]!.content;
  t.match(sent, /contact \[EMAIL\] or \[PHONE\], card \[CREDIT_CARD\], key \[(API_KEY|SECRET)\]/);
  t.equal(sent.length < big.length, true);
  t.notMatch(sent, /ann@corp|4111|555 0100|sk-proj/);

  const denied = (await client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'default.regexMatch': { rule: 'BEGIN [A-Z]+ PRIVATE KEY', not: true }, deny: true }] })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '-----BEGIN RSA PRIVATE KEY-----' }] })
    .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(denied.status, 446);

  // A webhook that rewrites the request; the gateway holds its credential.
  const { createServer } = await import('node:http');
  const seen: Array<{ auth: string | undefined; body: { phase: string; text: string } }> = [];
  const hook = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { phase: string; text: string; request: Record<string, unknown> };
      seen.push({ auth: req.headers.authorization, body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ verdict: true, transformedData: { request: { json: { ...body.request, messages: [{ role: 'user', content: 'rewritten by the webhook' }] } } } }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  t.teardown(() => hook.close());
  const port = (hook.address() as { port: number }).port;
  const viaHook = client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'default.webhook': { webhookURL: `http://127.0.0.1:${port}/check`, headers: { authorization: 'Bearer hook-secret' } } }] });
  await viaHook.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'original text' }] });
  t.equal(seen[0]?.auth, 'Bearer hook-secret');
  t.equal(seen[0]?.body.phase, 'input');
  t.equal(seen[0]?.body.text, 'original text');
  t.equal((lastBody(mock) as { messages: Array<{ content: string }> }).messages[0]!.content, 'rewritten by the webhook');
  const refused = (await client(gw, mock, { ...leaf(mock), input_guardrails: [{ 'default.webhook': { webhookURL: 'http://169.254.169.254/latest' } }] })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
    .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(refused.status, 400, 'a webhook URL the SSRF guard refuses is a 400 when the config is sent');
  t.match((refused.error as { param: string }).param, /webhookURL/);
});

t.test('the check pool runs built-in checks in worker threads with the same spans as inline', async (t) => {
  const { createCheckPool } = await import('../plugins/guardrails/pool.js');
  const { builtinChecks } = await import('../plugins/guardrails/checks/index.js');
  const { OPERATOR_URL_POLICY } = await import('../core/index.js');
  const pii = builtinChecks({ hosts: OPERATOR_URL_POLICY }).find((c) => c.id === 'default.pii')!;
  const check = { id: pii.id, def: pii as never, params: {} };
  const pool = createCheckPool({ threshold: 10, threads: 1, maxQueue: 10, builtin: new Set(['default.pii']) });
  t.teardown(() => pool.close());
  const text = 'mail ann@corp.io, call +44 20 7946 0958, from 10.0.0.1';
  const inline = (pii as unknown as { find(t: string, p: unknown): unknown }).find(text, {});
  t.same(await pool.find(check as never, text), inline);
  t.equal(pool.completed(), 1, 'the task ran on the pool');
  t.equal(pool.poolable({ id: 'default.webhook', def: { id: 'default.webhook' }, params: {} } as never), false, 'webhooks never go to the pool');
});

t.test('async output guardrails on a stream run after it on the text as sent, and are in the log', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const c = client(gw, mock, { ...leaf(mock, 'chunks=6'), output_guardrails: [{ 'test.maxLen': { max: 5 }, async: true, deny: true, id: 'after' }, { 'test.email': {}, redact: true }] });
  const { data: stream, response } = await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'to a@b.io' }] }).withResponse();
  const { text, error } = await readStream(stream);
  t.equal(error, undefined, 'an async deny does not end the stream');
  t.equal(text, 'Mock reply to: to [EMAIL]');
  const log = await logOf(gw, response.headers.get('x-gateway-request-id')!);
  const after = (log.guardrails as { results: { after_request_hooks: Array<{ id: string; async: boolean; verdict: boolean; checks: Array<{ data?: { length?: number } }> }> } }).results.after_request_hooks;
  const late = after.find((o) => o.id === 'after');
  t.equal(late?.async, true);
  t.equal(late?.verdict, false);
  t.equal(late?.checks[0]?.data?.length, 'Mock reply to: to [EMAIL]'.length, 'it saw the text as sent, redacted');
});

t.test('a stored stream is not replayed to a request whose answer guardrails check as it streams', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, config-strategy, guardrails, test-checks, cache, admin-resources]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'test-checks': checks },
  });
  const request = { model: 'gpt-4o-mini', stream: true as const, messages: [{ role: 'user' as const, content: 'to a@b.io' }] };
  // Stored without guardrails …
  const bare = client(gw, mock, { ...leaf(mock), cache: { mode: 'simple' } });
  t.equal((await readStream(await bare.chat.completions.create(request))).text, 'Mock reply to: to a@b.io');
  const again = await bare.chat.completions.create(request).withResponse();
  await readStream(again.data);
  t.equal(again.response.headers.get('x-gateway-cache-status'), 'HIT', 'the stream was stored');
  // … and not replayed, unseen, to a request that redacts its answer.
  const guarded = client(gw, mock, { ...leaf(mock), cache: { mode: 'simple' }, output_guardrails: [{ 'test.email': {}, redact: true }] });
  const { data, response } = await guarded.chat.completions.create(request).withResponse();
  t.equal((await readStream(data)).text, 'Mock reply to: to [EMAIL]');
  t.equal(response.headers.get('x-gateway-cache-status'), 'MISS');
});

t.test('a leaf of its own that denies answers 446 with no upstream call, and no fallback past a denial', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, mock);
  const config = {
    strategy: { mode: 'fallback' },
    targets: [{ ...leaf(mock), input_guardrails: [{ 'test.email': {}, deny: true, id: 'strict' }] }, { ...leaf(mock) }],
  };
  mock.requests.length = 0;
  const err = (await client(gw, mock, config)
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'to a@b.io' }] })
    .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
  t.equal(err.status, 446);
  t.equal((err.error as { hook_results: { before_request_hooks: Array<{ id: string }> } }).hook_results.before_request_hooks[0]!.id, 'strict');
  t.equal(mock.requests.length, 0, 'a denial is the answer: the fallback target is not tried either');
  // Without the span, the same config goes to the first target.
  const ok = await client(gw, mock, config).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
  t.equal(ok.choices[0]!.message.content, 'Mock reply to: hello');
  t.equal(mock.requests.length, 1);
});
