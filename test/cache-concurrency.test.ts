/**
 * The `cache` plugin under concurrency, over real sockets through
 * `[logging, auth, config-strategy, cache]` to the mock upstream (which delays its answers so
 * the requests really overlap):
 *
 * - read-your-writes: the request right after a MISS is a HIT, with no wait between them;
 * - single-flight: 20 concurrent identical misses make ONE upstream call, every caller gets the
 *   same answer, 19 are HITs whose log record says how long they waited (`cache_wait_ms`);
 *   streamed too, each follower's SSE stream parsed by the official SDK;
 * - never across partitions: two workspaces (or two namespaces) make one call each;
 * - a leader that fails (an upstream 500, a client that goes away) hands its followers nothing:
 *   they still get answers, never its error; a follower's wait is bounded; a forced refresh
 *   neither leads nor follows.
 *
 * Distributed mode (Valkey entries) has the same read-your-writes and single-flight test in
 * test/distributed-cache-concurrency.test.ts.
 */
import t from 'tap';
import { request } from 'undici';
import OpenAI from 'openai';
import { startGateway, startMock, ADMIN_KEY, addWorkspace, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { Scopes } from '../core/index.js';

type Json = Record<string, unknown>;
const N = 20;
const SIMPLE = { mode: 'simple', max_age: 60 };

/** Long enough that all N requests reach the gateway while the first is still upstream. */
const SLOW = 'delay=1500';

function routing(mock: MockUpstream, directives = SLOW, cache: Json = SIMPLE): string {
  return JSON.stringify({ cache, targets: [{ provider: 'openai', api_key: 'sk', custom_host: `${mock.url}/mock/${directives}/v1` }] });
}

const chatBody = (content: string, extra: Json = {}): Json => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

interface Answer {
  status: number;
  cache: string | undefined;
  id: string;
  text: string;
}

interface Setup {
  gw: StartedGateway;
  mock: MockUpstream;
  post(body: Json, options?: { config?: string; key?: string; headers?: Record<string, string>; signal?: AbortSignal }): Promise<Answer>;
  calls(): number;
  /** The log records tagged with metadata `{run}`, once `count` of them were written. */
  records(run: string, count: number): Promise<Json[]>;
}

async function setup(t: Teardown, options = ''): Promise<Setup> {
  const mock = await startMock(t);
  const yaml = `pipeline:\n  - logging: {flush_ms: 20}\n  - auth\n  - config-strategy\n  - cache${options ? `: ${options}` : ''}\n`;
  const gw = await startGateway(t, { yaml, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const post: Setup['post'] = async (body, { config = routing(mock), key = ADMIN_KEY, headers = {}, signal } = {}) => {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-config': config, ...headers },
      body: JSON.stringify(body),
      signal,
    });
    const text = await res.body.text();
    const cache = res.headers['x-gateway-cache-status'];
    return { status: res.statusCode, cache: typeof cache === 'string' ? cache : undefined, id: String(res.headers['x-gateway-request-id']), text };
  };
  const calls = (): number => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
  const records: Setup['records'] = async (run, count) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await request(`${gw.url}/v1/logs?page_size=100&metadata=${encodeURIComponent(JSON.stringify({ run }))}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
      const body = (await res.body.json()) as { data?: Json[] };
      const data = body.data ?? [];
      if (data.length >= count || Date.now() > deadline) return data;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return { gw, mock, post, calls, records };
}

function sdk(gw: StartedGateway, config: string, run: string): OpenAI {
  return new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'unused-the-config-has-the-key',
    maxRetries: 0,
    timeout: 20_000,
    defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': config, 'x-gateway-metadata': JSON.stringify({ run }) },
  });
}

const count = (values: Array<string | undefined | null>, value: string): number => values.filter((v) => v === value).length;

t.test('cache under concurrency (embedded LMDB)', async (t) => {
  const s = await setup(t);
  const { gw, mock } = s;
  t.beforeEach(() => mock.reset());

  t.test('read-your-writes: the request right after a MISS is a HIT (SDK, plain and streamed)', async (t) => {
    const client = sdk(gw, routing(mock, 'delay=0'), 'ryw');
    for (let i = 0; i < 5; i++) {
      const content = `read your writes ${i}`;
      const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).withResponse();
      const second = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).withResponse();
      t.equal(first.response.headers.get('x-gateway-cache-status'), 'MISS');
      t.equal(second.response.headers.get('x-gateway-cache-status'), 'HIT', `repeat ${i}: a HIT at once`);
      t.same(second.data, first.data, 'the stored answer');
    }
    const read = async (): Promise<{ text: string; status: string | null }> => {
      const { data, response } = await client.chat.completions
        .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'read your streamed writes' }] })
        .withResponse();
      let text = '';
      for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
      return { text, status: response.headers.get('x-gateway-cache-status') };
    };
    const a = await read();
    const b = await read();
    t.equal(a.status, 'MISS');
    t.equal(b.status, 'HIT', 'a streamed answer too');
    t.equal(b.text, a.text);
    t.equal(s.calls(), 6, 'one upstream call per question');
  });

  t.test(`single-flight: ${N} concurrent identical misses make one upstream call; 19 HITs that waited`, async (t) => {
    const client = sdk(gw, routing(mock), 'sf-plain');
    const answers = await Promise.all(
      Array.from({ length: N }, () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one flight' }] }).withResponse()),
    );
    t.equal(s.calls(), 1, 'the upstream saw one call');
    const statuses = answers.map((a) => a.response.headers.get('x-gateway-cache-status'));
    t.equal(count(statuses, 'MISS'), 1, 'one leader');
    t.equal(count(statuses, 'HIT'), N - 1, 'the followers are HITs');
    const ids = new Set(answers.map((a) => a.data.id));
    t.equal(ids.size, 1, 'every caller got the same answer');
    t.ok(answers.every((a) => typeof a.data.choices[0]?.message.content === 'string' && a.data.choices[0].message.content.length > 0), 'a real completion each');

    const records = await s.records('sf-plain', N);
    t.equal(records.length, N, 'one log record per request');
    const waited = records.filter((r) => r.cache_status === 'HIT');
    t.equal(waited.length, N - 1);
    t.ok(
      waited.every((r) => typeof r.cache_wait_ms === 'number' && r.cache_wait_ms > 0),
      'each HIT record says how long it waited for the leader',
    );
    const leader = records.find((r) => r.cache_status === 'MISS');
    t.equal(leader?.cache_wait_ms, null, 'the leader did not wait');
  });

  t.test(`single-flight of a stream: one upstream call, each follower gets the whole SSE stream (SDK)`, async (t) => {
    const client = sdk(gw, routing(mock, 'first_byte_delay=1500;chunks=6;chunk_delay=20'), 'sf-stream');
    const read = async (): Promise<{ text: string; status: string | null; chunks: number; id: string }> => {
      const { data, response } = await client.chat.completions
        .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one streamed flight' }] })
        .withResponse();
      let text = '';
      let chunks = 0;
      let id = '';
      for await (const chunk of data) {
        chunks++;
        id = chunk.id;
        text += chunk.choices[0]?.delta?.content ?? '';
      }
      return { text, status: response.headers.get('x-gateway-cache-status'), chunks, id };
    };
    const answers = await Promise.all(Array.from({ length: N }, read));
    t.equal(s.calls(), 1, 'the upstream saw one call');
    t.equal(count(answers.map((a) => a.status), 'MISS'), 1);
    t.equal(count(answers.map((a) => a.status), 'HIT'), N - 1);
    const leader = answers.find((a) => a.status === 'MISS')!;
    t.ok(leader.text.length > 0 && leader.chunks > 1, 'the leader streamed several chunks');
    t.ok(
      answers.every((a) => a.text === leader.text && a.chunks === leader.chunks && a.id === leader.id),
      'every follower parsed the same stream: same chunks, same text, same id',
    );
    const records = await s.records('sf-stream', N);
    t.equal(records.filter((r) => r.cache_status === 'HIT' && typeof r.cache_wait_ms === 'number').length, N - 1, 'the followers waited');
    t.ok(records.every((r) => r.stream === true));

    // Raw bytes: the replayed stream is the SSE text, [DONE] included.
    mock.reset();
    const raw = await Promise.all(
      Array.from({ length: 4 }, () => s.post(chatBody('raw streamed flight', { stream: true }), { config: routing(mock, 'first_byte_delay=1000') })),
    );
    t.equal(s.calls(), 1);
    t.ok(raw.every((r) => r.text === raw[0]!.text && r.text.endsWith('data: [DONE]\n\n')), 'the same SSE bytes for all, ending with [DONE]');
  });

  t.test('never across partitions: two workspaces, two namespaces, a plain and a streamed call', async (t) => {
    const teamB = addWorkspace(gw.store, 'flight-team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
    const question = chatBody('partitioned flight');
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => s.post(question)),
      ...Array.from({ length: 5 }, () => s.post(question, { key: teamB.key })),
    ]);
    t.equal(s.calls(), 2, 'one upstream call per workspace');
    t.ok(answers.every((a) => a.status === 200));
    const a = new Set(answers.slice(0, 5).map((x) => JSON.parse(x.text).id));
    const b = new Set(answers.slice(5).map((x) => JSON.parse(x.text).id));
    t.equal(a.size, 1, 'workspace A shares one answer');
    t.equal(b.size, 1, 'workspace B shares one answer');
    t.not([...a][0], [...b][0], 'but not with each other');

    mock.reset();
    const ns = (name: string): { headers: Record<string, string> } => ({ headers: { 'x-gateway-cache-namespace': name } });
    await Promise.all([
      ...Array.from({ length: 3 }, () => s.post(chatBody('namespaced flight'), ns('n1'))),
      ...Array.from({ length: 3 }, () => s.post(chatBody('namespaced flight'), ns('n2'))),
      ...Array.from({ length: 3 }, () => s.post(chatBody('namespaced flight', { stream: true }), ns('n1'))),
    ]);
    t.equal(s.calls(), 3, 'two namespaces and the streamed mode: one call each');
  });

  t.test('a leader answered with a 500: the followers still get answers, never its error', async (t) => {
    const config = routing(mock, 'status=500;fail_first=1;delay=1000');
    const leader = s.post(chatBody('failing leader'), { config });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the first request leads
    const followers = await Promise.all(Array.from({ length: N - 1 }, () => s.post(chatBody('failing leader'), { config })));
    const first = await leader;
    t.equal(first.status, 500, "the leader's own answer is its error");
    t.ok(followers.every((f) => f.status === 200), 'every follower got a 200');
    t.ok(followers.every((f) => f.cache !== undefined && ['HIT', 'MISS'].includes(f.cache)));
    t.equal(count(followers.map((f) => f.cache), 'MISS'), 1, 'one follower took over and went upstream');
    t.equal(new Set(followers.map((f) => JSON.parse(f.text).id)).size, 1, "the rest got the new leader's answer");
    t.equal(s.calls(), 2, 'the failed call and the one that replaced it');
  });

  t.test('an upstream that keeps failing: followers do not queue behind failures, and never get a HIT of an error', async (t) => {
    const config = routing(mock, 'status=500;delay=300');
    const answers = await Promise.all(Array.from({ length: 6 }, () => s.post(chatBody('always failing'), { config })));
    t.ok(answers.every((a) => a.status === 500), 'each got the upstream error of its own call');
    t.ok(answers.every((a) => a.cache === 'MISS'), 'none of them as a HIT');
    t.equal(s.calls(), 6, 'two leaders in a row failed: the rest went upstream on their own');
  });

  t.test('a leader whose client went away: the followers still get answers', async (t) => {
    const config = routing(mock, 'delay=1000');
    const gone = new AbortController();
    const leader = s.post(chatBody('abandoned leader'), { config, signal: gone.signal }).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const followers = Promise.all(Array.from({ length: 5 }, () => s.post(chatBody('abandoned leader'), { config })));
    await new Promise((resolve) => setTimeout(resolve, 200));
    gone.abort();
    t.type(await leader, Error, 'the leader was aborted');
    const answers = await followers;
    t.ok(answers.every((a) => a.status === 200), 'every follower got a 200');
    t.equal(count(answers.map((a) => a.cache), 'MISS'), 1, 'one of them took over');
    t.equal(count(answers.map((a) => a.cache), 'HIT'), 4);
  });

  t.test('a forced refresh neither leads nor follows', async (t) => {
    const headers = { 'x-gateway-cache-force-refresh': 'true' };
    const answers = await Promise.all(Array.from({ length: 4 }, () => s.post(chatBody('refresh flight'), { headers, config: routing(mock, 'delay=300') })));
    t.ok(answers.every((a) => a.cache === 'REFRESH' && a.status === 200));
    t.equal(s.calls(), 4, 'each went upstream');
  });
});

t.test('the wait is bounded: past single_flight_max_wait_ms a follower goes upstream itself', async (t) => {
  const s = await setup(t, '{single_flight_max_wait_ms: 100}');
  const answers = await Promise.all(Array.from({ length: 4 }, () => s.post(chatBody('impatient'), { config: routing(s.mock, 'delay=1000') })));
  t.ok(answers.every((a) => a.status === 200 && a.cache === 'MISS'), 'every request answered, none from the cache');
  t.equal(s.calls(), 4);
});

t.test('single_flight: false turns it off', async (t) => {
  const s = await setup(t, '{single_flight: false}');
  const config = routing(s.mock, 'delay=300');
  const answers = await Promise.all(Array.from({ length: 4 }, () => s.post(chatBody('no flights'), { config })));
  t.ok(answers.every((a) => a.status === 200 && a.cache === 'MISS'));
  t.equal(s.calls(), 4);
  t.equal((await s.post(chatBody('no flights'), { config })).cache, 'HIT', 'the cache itself still works');
});
