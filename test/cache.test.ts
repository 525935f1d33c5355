/**
 * The `cache` plugin over real sockets: the official SDK and raw HTTP through
 * `[auth, config-strategy, cache]` to the mock upstream. Exact hits and misses, force refresh,
 * namespaces, expiry, tenant isolation, errors never stored, streams recorded and replayed,
 * DISABLED without a cache block, eviction by count, the entry size bound; semantic hits on
 * paraphrases (the mock's bag-of-words embeddings), hard partitions, and an embedder that is down.
 * The key and the semantic index are also unit-tested as plain functions.
 */
import t from 'tap';
import { request } from 'undici';
import OpenAI from 'openai';
import { open } from 'lmdb';
import { join } from 'node:path';
import { startGateway, startMock, tempDir, ADMIN_KEY, addWorkspace, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { Scopes, createLogger } from '../core/index.js';
import { canonicalJson, cacheKey, keyBody, type KeyParts } from '../plugins/cache/key.js';
import { semanticInput } from '../plugins/cache/prompt-text.js';
import { SemanticIndex } from '../plugins/cache/semantic-index.js';
import { normalise } from '../plugins/cache/embedder.js';

type Json = Record<string, unknown>;
const PIPELINE = (options = ''): string => `pipeline:\n  - auth\n  - config-strategy\n  - cache${options ? `: ${options}` : ''}\n`;
const SIMPLE = { mode: 'simple', max_age: 60 };

function routing(mock: MockUpstream, cache: Json | null = SIMPLE, directives = ''): string {
  const host = `${mock.url}${directives ? `/mock/${directives}` : ''}/v1`;
  return JSON.stringify({ ...(cache ? { cache } : {}), targets: [{ provider: 'openai', api_key: 'sk', custom_host: host }] });
}

const chatBody = (content: string, extra: Json = {}): Json => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

interface Answer {
  status: number;
  cache: string | undefined;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

interface Setup {
  gw: StartedGateway;
  mock: MockUpstream;
  /** Raw HTTP: POST /v1/chat/completions. */
  post(body: Json, options?: { config?: string; key?: string; headers?: Record<string, string> }): Promise<Answer>;
  /** Chat calls the mock saw since the last reset. */
  calls(): number;
}

async function setup(t: Teardown, options = '', mockFor?: MockUpstream): Promise<Setup> {
  const mock = mockFor ?? (await startMock(t));
  const gw = await startGateway(t, { yaml: PIPELINE(options), env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const post: Setup['post'] = async (body, { config = routing(mock), key = ADMIN_KEY, headers = {} } = {}) => {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-config': config, ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    const cache = res.headers['x-gateway-cache-status'];
    return { status: res.statusCode, cache: typeof cache === 'string' ? cache : undefined, text, headers: res.headers };
  };
  const calls = (): number => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
  return { gw, mock, post, calls };
}

function sdk(gw: StartedGateway, config: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'unused-the-config-has-the-key',
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': config, ...headers },
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes are asynchronous: an entry is stored after the last byte went out, then committed in
 * the background (and an eviction batch commits after that). Waits for both.
 */
async function settle(gw: StartedGateway): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await sleep(20);
    await gw.store.flush();
  }
}

t.test('key: canonical body, stream fields out, every part counts', async (t) => {
  t.equal(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null, u: undefined }), '{"a":null,"b":[1,{"c":2,"d":1}]}');
  const body = { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [] };
  t.same(keyBody(body, undefined), { model: 'm', messages: [] }, 'stream and stream_options leave the body');
  t.same(keyBody(body, { model: 'llama3' }).model, 'llama3', 'the model after override_params');
  const parts: KeyParts = { workspace: 'w1', route: 'chat.completions', provider: 'openai', host: 'h', model: 'm', namespace: null, stream: false };
  const base = cacheKey(parts, { a: 1, b: 2 });
  t.equal(cacheKey(parts, { b: 2, a: 1 }), base, 'key order does not matter');
  t.match(base, /^[0-9a-f]{64}$/);
  for (const change of [{ workspace: 'w2' }, { route: 'completions' }, { provider: 'azure' }, { host: 'h2' }, { model: 'm2' }, { namespace: 'n' }, { stream: true }]) {
    t.not(cacheKey({ ...parts, ...change }, { a: 1, b: 2 }), base, `${Object.keys(change)[0]} is part of the key`);
  }
  t.throws(() => canonicalJson(JSON.parse('['.repeat(100) + ']'.repeat(100))), { code: 'cache_key_failed' }, 'absurd nesting is refused, not a stack overflow');
});

t.test('semantic input: the last user text, the rest of the body blanked', async (t) => {
  const chat = semanticInput('chat.completions', {
    model: 'm',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'first' },
      { role: 'user', content: [{ type: 'text', text: 'capital of France?' }, { type: 'image_url', image_url: { url: 'x' } }] },
    ],
  });
  t.equal(chat?.text, 'capital of France?');
  t.same((chat?.blanked.messages as Json[])[2], { role: 'user', content: [{ type: 'text', text: '' }, { type: 'image_url', image_url: { url: 'x' } }] }, 'images stay in the partition');
  t.equal(semanticInput('completions', { model: 'm', prompt: ['a', 'b'] })?.text, 'a\nb');
  t.equal(semanticInput('responses', { model: 'm', input: 'hi there' })?.text, 'hi there');
  t.equal(semanticInput('embeddings', { model: 'm', input: 'x' }), undefined, 'no prompt text on embeddings');
  t.equal(semanticInput('chat.completions', { model: 'm', messages: [{ role: 'user', content: '  ' }] }), undefined);
});

t.test('semantic index: hard partitions, bounds, expiry, and restarts from LMDB', async (t) => {
  const dir = tempDir();
  const log = createLogger({ level: 'silent', write: () => undefined });
  const vec = (...v: number[]): Float32Array => normalise(v)!;
  let root = open({ path: join(dir, 'idx.mdb') });
  let index = new SemanticIndex(root, { max_per_partition: 2, max_vectors: 3 }, log);
  index.add('p1', 'k1', 1000, vec(1, 0, 0));
  index.add('p1', 'k2', 2000, vec(0, 1, 0));
  index.add('p2', 'k3', 3000, vec(1, 0, 0));
  t.equal(index.search('p1', vec(1, 0.1, 0), 0.9, 0)?.key, 'k1');
  t.equal(index.search('p2', vec(0, 1, 0), 0.9, 0), undefined, 'another partition is never searched');
  t.equal(index.search('p1', vec(1, 0, 0), 0.9, 1000), undefined, 'an expired vector is skipped');
  index.add('p1', 'k4', 4000, vec(0, 0, 1));
  t.equal(index.search('p1', vec(1, 0, 0), 0.9, 0), undefined, 'the partition bound evicted its oldest (k1)');
  index.add('p3', 'k5', 5000, vec(0, 1, 1));
  t.equal(index.size, 3, 'the global bound holds');
  t.equal(index.search('p2', vec(1, 0, 0), 0.9, 0), undefined, 'the least recently written partition lost its oldest');
  await index.close();
  await root.close();

  root = open({ path: join(dir, 'idx.mdb') });
  index = new SemanticIndex(root, { max_per_partition: 2, max_vectors: 3 }, log);
  t.equal(index.size, 3, 'vectors came back after a restart');
  t.equal(index.search('p1', vec(0, 0, 1), 0.99, 0)?.key, 'k4');
  t.equal(index.search('p3', vec(0, 1, 1), 0.99, 0)?.created, 5000);
  await index.close();
  await root.close();
});

t.test('simple cache', async (t) => {
  const s = await setup(t);
  const { gw, mock } = s;
  t.beforeEach(() => mock.reset());

  t.test('a miss, then a hit: the mock sees one call and both bodies are equal (SDK)', async (t) => {
    const client = sdk(gw, routing(mock));
    const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'miss then hit' }] }).withResponse();
    t.equal(first.response.headers.get('x-gateway-cache-status'), 'MISS');
    await settle(gw);
    const second = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'miss then hit' }] }).withResponse();
    t.equal(second.response.headers.get('x-gateway-cache-status'), 'HIT');
    t.equal(s.calls(), 1, 'the mock saw one call: the hit never reached it');
    t.same(second.data, first.data, 'the same answer, id included');
    t.equal(second.response.headers.get('x-gateway-provider'), 'openai');
    const logged = gw.logs.filter((l) => l.msg === 'cache hit' && l.requestId === second.response.headers.get('x-gateway-request-id'));
    t.equal(logged.length, 1, 'the hit is logged');
    t.equal(logged[0]?.status, 'HIT');
    t.equal(logged[0]?.saved_tokens, (first.data.usage?.total_tokens ?? -1), 'with the tokens it saved');
    t.type(logged[0]?.saved_ms, 'number');
  });

  t.test('raw HTTP: the bytes are the same', async (t) => {
    const a = await s.post(chatBody('raw bytes'));
    t.equal(a.cache, 'MISS');
    await settle(gw);
    const b = await s.post(chatBody('raw bytes'));
    t.equal(b.cache, 'HIT');
    t.equal(b.text, a.text);
    t.equal(s.calls(), 1);
    t.match(b.headers['content-type'], /application\/json/);
  });

  t.test('force refresh calls upstream and stores the new answer', async (t) => {
    const a = await s.post(chatBody('refresh me'));
    await settle(gw);
    t.equal((await s.post(chatBody('refresh me'))).cache, 'HIT');
    const r = await s.post(chatBody('refresh me'), { headers: { 'x-gateway-cache-force-refresh': 'true' } });
    t.equal(r.cache, 'REFRESH');
    t.equal(r.status, 200);
    t.not(JSON.parse(r.text).id, JSON.parse(a.text).id, 'a new upstream answer');
    await settle(gw);
    const after = await s.post(chatBody('refresh me'));
    t.equal(s.calls(), 2, 'the first call and the refresh');
    t.equal(after.cache, 'HIT');
    t.equal(after.text, r.text, 'the refreshed answer replaced the entry');
  });

  t.test('namespaces separate entries; metadata does not', async (t) => {
    const ns = (name: string): { headers: Record<string, string> } => ({ headers: { 'x-gateway-cache-namespace': name } });
    t.equal((await s.post(chatBody('namespaced'), ns('a'))).cache, 'MISS');
    t.equal((await s.post(chatBody('namespaced'), ns('b'))).cache, 'MISS', 'another namespace misses');
    await settle(gw);
    t.equal((await s.post(chatBody('namespaced'), ns('a'))).cache, 'HIT');
    t.equal((await s.post(chatBody('namespaced'), ns('b'))).cache, 'HIT');
    t.equal((await s.post(chatBody('namespaced'))).cache, 'MISS', 'no namespace is its own');
    const meta = await s.post(chatBody('namespaced'), { headers: { 'x-gateway-cache-namespace': 'a', 'x-gateway-metadata': '{"user":"u9"}' } });
    t.equal(meta.cache, 'HIT', 'metadata is not part of the key');
  });

  t.test('an entry older than max_age is a miss', async (t) => {
    const config = routing(mock, { mode: 'simple', max_age: 1 });
    t.equal((await s.post(chatBody('expire me'), { config })).cache, 'MISS');
    await settle(gw);
    t.equal((await s.post(chatBody('expire me'), { config })).cache, 'HIT');
    await sleep(1200);
    t.equal((await s.post(chatBody('expire me'), { config })).cache, 'MISS');
  });

  t.test('workspaces never share entries', async (t) => {
    const teamB = addWorkspace(gw.store, 'cache-team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
    t.equal((await s.post(chatBody('tenant'))).cache, 'MISS');
    await settle(gw);
    t.equal((await s.post(chatBody('tenant'))).cache, 'HIT');
    mock.reset();
    const b = await s.post(chatBody('tenant'), { key: teamB.key });
    t.equal(b.status, 200);
    t.equal(b.cache, 'MISS', 'the second workspace misses');
    t.equal(s.calls(), 1);
    await settle(gw);
    t.equal((await s.post(chatBody('tenant'), { key: teamB.key })).cache, 'HIT', 'and then has its own entry');
  });

  t.test('errors are not cached', async (t) => {
    const config = routing(mock, SIMPLE, 'status=500');
    const a = await s.post(chatBody('fail me'), { config });
    await sleep(50);
    const b = await s.post(chatBody('fail me'), { config });
    t.equal(a.status, 500);
    t.equal(b.status, 500);
    t.equal(b.cache, 'MISS');
    t.equal(s.calls(), 2, 'the mock saw both calls');
  });

  t.test('a stream is recorded and replayed as a stream ending with [DONE]', async (t) => {
    const client = sdk(gw, routing(mock));
    const read = async (): Promise<{ text: string; status: string | null }> => {
      const { data, response } = await client.chat.completions
        .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream me' }] })
        .withResponse();
      let text = '';
      for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
      return { text, status: response.headers.get('x-gateway-cache-status') };
    };
    const first = await read();
    t.equal(first.status, 'MISS');
    t.ok(first.text.length > 0);
    await settle(gw);
    const second = await read();
    t.equal(second.status, 'HIT');
    t.equal(second.text, first.text, 'the same text');
    t.equal(s.calls(), 1, 'the mock saw one call');

    const raw = await s.post(chatBody('stream me', { stream: true }));
    t.match(raw.headers['content-type'], /^text\/event-stream/);
    t.ok(raw.text.endsWith('data: [DONE]\n\n'), 'ends with [DONE]');
    const events = raw.text.split('\n\n').filter((e) => e.length > 0);
    t.ok(events.every((e) => e.startsWith('data: ')), 'only data events, in order');

    const plain = await s.post(chatBody('stream me'));
    t.equal(plain.cache, 'MISS', 'a plain request does not replay a streamed entry');
    t.match(plain.headers['content-type'], /application\/json/);
  });

  t.test('a stream cut by the upstream, or carrying an error event, is not stored', async (t) => {
    for (const directives of ['reset=mid_stream;reset_after=2', 'error_event']) {
      mock.reset();
      const config = routing(mock, SIMPLE, directives);
      await s.post(chatBody(`cut me ${directives}`, { stream: true }), { config }).catch(() => undefined);
      await settle(gw);
      const again = await s.post(chatBody(`cut me ${directives}`, { stream: true }), { config }).catch(() => undefined);
      t.not(again?.cache, 'HIT', directives);
      t.equal(s.calls(), 2, `${directives}: the mock saw both calls`);
    }
  });

  t.test('without a cache block: DISABLED, nothing stored', async (t) => {
    const config = routing(mock, null);
    const a = await s.post(chatBody('no cache'), { config });
    await sleep(50);
    const b = await s.post(chatBody('no cache'), { config });
    t.equal(a.cache, 'DISABLED');
    t.equal(b.cache, 'DISABLED');
    t.equal(s.calls(), 2);
  });
});

t.test('eviction: max_entries keeps the newest', async (t) => {
  const s = await setup(t, '{max_entries: 3}');
  for (const n of [1, 2, 3, 4]) {
    t.equal((await s.post(chatBody(`evict ${n}`))).cache, 'MISS');
    await settle(s.gw); // the eviction batch runs after the write commits
  }
  t.equal((await s.post(chatBody('evict 4'))).cache, 'HIT', 'the newest stays');
  t.equal((await s.post(chatBody('evict 2'))).cache, 'HIT');
  t.equal((await s.post(chatBody('evict 1'))).cache, 'MISS', 'the oldest was evicted');
});

t.test('an answer larger than max_entry_bytes is never stored', async (t) => {
  const s = await setup(t, '{max_entry_bytes: 64}');
  t.equal((await s.post(chatBody('too big'))).cache, 'MISS');
  await sleep(100);
  t.equal((await s.post(chatBody('too big'))).cache, 'MISS');
  t.equal(s.calls(), 2);
});

t.test('default_mode applies without a cache block', async (t) => {
  const s = await setup(t, '{default_mode: simple, default_max_age: 60}');
  const config = routing(s.mock, null);
  t.equal((await s.post(chatBody('by default'), { config })).cache, 'MISS');
  await settle(s.gw);
  t.equal((await s.post(chatBody('by default'), { config })).cache, 'HIT');
});

t.test('semantic cache', async (t) => {
  const mock = await startMock(t);
  const s = await setup(t, `{semantic: {embeddings_url: "${mock.url}/v1/embeddings", model: text-embedding-3-small, threshold: 0.9}}`, mock);
  const SEMANTIC = { mode: 'semantic', max_age: 60 };
  const config = routing(mock, SEMANTIC);
  const ask = (q: string, options: { key?: string; headers?: Record<string, string> } = {}): Promise<Answer> => s.post(chatBody(q), { config, ...options });
  const embeddings = (): number => mock.requests.filter((r) => r.path.endsWith('/embeddings')).length;

  t.test('a paraphrase hits; an unrelated question misses', async (t) => {
    const first = await ask('What is the capital city of France?');
    t.equal(first.cache, 'SEMANTIC MISS');
    t.equal(embeddings(), 1, 'the prompt was embedded');
    await settle(s.gw);
    const para = await ask('capital city of France, what is it?');
    t.equal(para.cache, 'SEMANTIC HIT');
    t.equal(para.text, first.text, 'the stored answer');
    const joke = await ask('Tell me a joke about cats');
    t.equal(joke.cache, 'SEMANTIC MISS');
    t.equal(joke.status, 200);
    t.equal((await ask('What is the capital city of France?')).cache, 'HIT', 'the exact question is an exact hit (no embedding call)');
  });

  t.test('never across partitions: another namespace, another workspace', async (t) => {
    await ask('How tall is Mount Everest?', { headers: { 'x-gateway-cache-namespace': 'n1' } });
    await settle(s.gw);
    t.equal((await ask('Mount Everest, how tall?', { headers: { 'x-gateway-cache-namespace': 'n1' } })).cache, 'SEMANTIC HIT');
    t.equal((await ask('Mount Everest, how tall is it?', { headers: { 'x-gateway-cache-namespace': 'n2' } })).cache, 'SEMANTIC MISS', 'another namespace');
    const other = addWorkspace(s.gw.store, 'semantic-team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
    t.equal((await ask('Mount Everest tall how?', { key: other.key, headers: { 'x-gateway-cache-namespace': 'n1' } })).cache, 'SEMANTIC MISS', 'another workspace');
    const sys = await s.post({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'answer in French' }, { role: 'user', content: 'how tall is Mount Everest' }] }, {
      config,
      headers: { 'x-gateway-cache-namespace': 'n1' },
    });
    t.equal(sys.cache, 'SEMANTIC MISS', 'another system prompt is another partition');
  });

  t.test('an embedder that is down degrades to SEMANTIC MISS, never an error', async (t) => {
    const down = await setup(t, '{semantic: {embeddings_url: "http://127.0.0.1:9/v1/embeddings", model: m, threshold: 0.9, timeout_ms: 500}}', mock);
    const cfg = routing(mock, SEMANTIC);
    const a = await down.post(chatBody('embedder down'), { config: cfg });
    t.equal(a.status, 200);
    t.equal(a.cache, 'SEMANTIC MISS');
    t.ok(JSON.parse(a.text).choices, 'the upstream answer');
    const b = await down.post(chatBody('embedder is down'), { config: cfg });
    t.equal(b.status, 200);
    t.equal(b.cache, 'SEMANTIC MISS');
  });
});
