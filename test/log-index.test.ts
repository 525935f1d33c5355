/**
 * The logs' secondary indexes (issue 11, item 5): GET /v1/logs and the exports read through them.
 * Records are seeded straight into the gateway's store with the plugin's own writer function
 * (`writeLogs`), so the data is exactly what the writer makes; the API is then asked over a real
 * socket. Asserts: each indexed filter returns exactly the matching records, newest first; pages
 * and cursors cover them without overlap or gap; workspace keys never see another workspace's
 * records through any index or cursor; POST /v1/logs records are indexed; retention removes
 * index entries with their records; records written before the indexes are backfilled; the walk
 * is bounded (has_more, next_cursor, total_exact).
 */
import t from 'tap';
import { join } from 'node:path';
import { request } from 'undici';
import { open, type Key } from 'lmdb';
import { startGateway, addWorkspace, tempDir, ADMIN_KEY, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';
import { createLogger } from '../core/logger.js';
import { openLogDb, type LogDb, type StoredLog } from '../plugins/logging/log-db.js';
import { BACKFILL_META, INDEXED, startBackfill, writeLogs, type IndexField } from '../plugins/logging/log-index.js';
import { INDEX_SLOTS, LOG_INDEX_DB, openLogIndex, type LogIndex } from '../plugins/logging/log-parts.js';
import { newWalkState, queryLogs } from '../plugins/logging/log-query.js';
import { sweep } from '../plugins/logging/retention.js';
import { idPrefix } from '../plugins/logging/scan.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const idAt = (ms: number, n = 0): string => `${idPrefix(ms)}-7000-8000-${n.toString(16).padStart(12, '0')}`;
const silent = createLogger({ level: 'silent', write: () => undefined });

function rec(id: string, ms: number, o: Partial<StoredLog> = {}): StoredLog {
  return {
    id,
    created_at: new Date(ms).toISOString(),
    trace_id: `trace-${id}`,
    span_id: null,
    parent_span_id: null,
    span_name: null,
    organisation_id: null,
    workspace_id: null,
    api_key_id: 'key-org',
    virtual_key: null,
    metadata: {},
    method: 'POST',
    path: '/v1/chat/completions',
    route: 'chat.completions',
    provider: 'openai',
    model: 'gpt-4o',
    config: null,
    last_used_option_index: '0',
    retry_count: 0,
    cache_status: 'DISABLED',
    stream: false,
    status: 200,
    is_success: true,
    source: 'upstream',
    error_code: null,
    aborted: false,
    latency: { total_ms: 1, upstream_ms: 1, gateway_ms: 0, ttfb_ms: null },
    usage: null,
    cost_cents: 0,
    priced_as: null,
    request_body: null,
    response_body: null,
    ...o,
  };
}

interface Seeded {
  gw: StartedGateway;
  db: LogDb;
  idx: LogIndex;
  teamA: { id: string; key: string };
  teamB: { id: string; key: string };
  /** Every seeded record, oldest first. */
  all: StoredLog[];
  list(query: Record<string, string>, key?: string): Promise<{ status: number; body: Json }>;
}

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3'];
const PROVIDERS = ['openai', 'openai', 'anthropic'];
const STATUSES = [200, 200, 200, 429, 500];

/** 120 records over two minutes, spread across two workspaces, the organisation, models, statuses, keys and traces. */
async function seed(t: Teardown): Promise<Seeded> {
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - logging: {flush_ms: 20}\n  - auth\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const teamA = addWorkspace(gw.store, 'team-a', DEFAULT_WORKSPACE_SCOPES);
  const teamB = addWorkspace(gw.store, 'team-b', DEFAULT_WORKSPACE_SCOPES);
  const db = openLogDb(gw.store.root);
  const idx = openLogIndex(gw.store.root);
  const base = Date.now() - 120_000;
  const all: StoredLog[] = [];
  for (let i = 0; i < 120; i++) {
    const ms = base + i * 1000;
    const ws = i % 3 === 0 ? teamA.id : i % 3 === 1 ? teamB.id : null;
    all.push(
      rec(idAt(ms, i), ms, {
        workspace_id: ws,
        model: MODELS[i % 3 === 2 ? 1 : i % 4 === 0 ? 2 : 0]!,
        provider: PROVIDERS[i % 3 === 2 ? 1 : i % 4 === 0 ? 2 : 0]!,
        status: STATUSES[i % 5]!,
        api_key_id: `key-${i % 4}`,
        trace_id: `trace-${i % 10}`,
      }),
    );
  }
  // In batches of 10 and partitions of 25 records: every walk below crosses partitions.
  for (let i = 0; i < all.length; i += 10) {
    const seeded = await writeLogs(db, idx, all.slice(i, i + 10), 25);
    if (seeded.failed > 0) throw new Error('seed records were not written', { cause: seeded.error });
  }
  if (idx.parts().length < 4) throw new Error('the seed was meant to span partitions');
  // The gateway logs its own admin calls (the list calls included): the window ends at the seed.
  const end = all.at(-1)!.created_at;
  const list = async (query: Record<string, string>, key = ADMIN_KEY): Promise<{ status: number; body: Json }> => {
    const res = await request(`${gw.url}/v1/logs?${new URLSearchParams({ ...(query.end_time === 'none' ? {} : { end_time: end }), ...query })}`.replace('end_time=none', ''), { headers: { 'x-gateway-api-key': key } });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  };
  return { gw, db, idx, teamA, teamB, all, list };
}

/** Every index entry's key, in every slot. */
const allKeys = (idx: LogIndex): string[][] => idx.slots.flatMap((slot) => [...slot.getKeys()] as string[][]);

const newest = (records: StoredLog[]): string[] => records.map((r) => r.id).reverse();
const ids = (body: Json): string[] => (body.data as Json[]).map((r) => r.id as string);

t.test('each indexed filter returns exactly its records, newest first, with an exact total', async (t) => {
  const s = await seed(t);
  const cases: Array<[Record<string, string>, (r: StoredLog) => boolean]> = [
    [{ model: 'claude-3' }, (r) => r.model === 'claude-3'],
    [{ provider: 'anthropic' }, (r) => r.provider === 'anthropic'],
    [{ status: '429' }, (r) => r.status === 429],
    [{ status: '500, 429' }, (r) => r.status === 500 || r.status === 429],
    [{ api_key_id: 'key-3' }, (r) => r.api_key_id === 'key-3'],
    [{ trace_id: 'trace-7' }, (r) => r.trace_id === 'trace-7'],
    [{ workspace_id: 'team-b' }, (r) => r.workspace_id === s.teamB.id],
    [{ model: 'gpt-4o', status: '200' }, (r) => r.model === 'gpt-4o' && r.status === 200],
    [{ model: 'gpt-4o-mini', provider: 'anthropic' }, () => false],
    [{ model: 'no-such-model' }, () => false],
    [{}, () => true],
  ];
  for (const [query, want] of cases) {
    const expected = newest(s.all.filter(want));
    const res = await s.list({ ...query, page_size: '500' });
    t.equal(res.status, 200, JSON.stringify(query));
    t.same(ids(res.body), expected, `${JSON.stringify(query)}: exactly the matching records, newest first`);
    t.match(res.body, { total: expected.length, total_exact: true, has_more: false, next_cursor: null }, `${JSON.stringify(query)}: exact total`);
  }
  // A time window on top of an index.
  const from = s.all[30]!.created_at;
  const to = s.all[89]!.created_at;
  const windowed = await s.list({ model: 'gpt-4o', start_time: from, end_time: to, page_size: '500' });
  t.same(ids(windowed.body), newest(s.all.filter((r) => r.model === 'gpt-4o' && r.created_at >= from && r.created_at <= to)), 'an index within a time window');
});

t.test('pages and cursors: every match once, in order, whatever the page size', async (t) => {
  const s = await seed(t);
  const queries: Array<Record<string, string>> = [{ model: 'gpt-4o' }, { status: '200,500' }, {}, { api_key_id: 'key-1' }];
  for (const query of queries) {
    const expected = newest(s.all.filter((r) => (query.model === undefined || r.model === query.model) && (query.status === undefined || [200, 500].includes(r.status)) && (query.api_key_id === undefined || r.api_key_id === query.api_key_id)));
    // Cursor pages.
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const page: { body: Json } = await s.list({ ...query, page_size: '7', ...(cursor === null ? {} : { cursor }) });
      seen.push(...ids(page.body));
      cursor = page.body.next_cursor as string | null;
      t.equal(page.body.has_more, cursor !== null, 'has_more and next_cursor agree');
      if (cursor === null) break;
    }
    t.same(seen, expected, `${JSON.stringify(query)}: cursor pages cover every match once, newest first`);
    // Offset pages (current_page) still work.
    const byPage: string[] = [];
    for (let p = 0; p * 7 < expected.length; p++) {
      const page = await s.list({ ...query, page_size: '7', current_page: String(p) });
      t.equal(page.body.total, expected.length, 'total is the number of matches, not the page');
      byPage.push(...ids(page.body));
    }
    t.same(byPage, expected, `${JSON.stringify(query)}: current_page pages as well`);
  }
  t.equal((await s.list({ cursor: 'not a cursor' })).status, 400, 'a cursor is validated');
});

t.test('workspace isolation holds through every index and cursor', async (t) => {
  const s = await seed(t);
  const mine = (r: StoredLog): boolean => r.workspace_id === s.teamA.id;
  const queries: Array<Record<string, string>> = [{}, { model: 'claude-3' }, { model: 'gpt-4o-mini' }, { provider: 'openai' }, { status: '200' }, { api_key_id: 'key-1' }, { trace_id: 'trace-1' }, { trace_id: 'trace-2' }];
  for (const q of queries) {
    const res = await s.list({ ...q, page_size: '500' }, s.teamA.key);
    t.equal(res.status, 200);
    for (const r of res.body.data as Json[]) t.equal(r.workspace_id, s.teamA.id, `${JSON.stringify(q)}: only its own workspace`);
    const expected = s.all.filter(mine).filter((r) => (q.model === undefined || r.model === q.model) && (q.provider === undefined || r.provider === q.provider) && (q.status === undefined || String(r.status) === q.status) && (q.api_key_id === undefined || r.api_key_id === q.api_key_id) && (q.trace_id === undefined || r.trace_id === q.trace_id));
    t.same(ids(res.body), newest(expected), `${JSON.stringify(q)}: all of its own`);
  }
  // Without a time bound the index counts alone (entry values are the workspaces): still only its own.
  for (const q of queries.filter((q) => q.model !== undefined || q.provider !== undefined || q.api_key_id !== undefined || q.trace_id !== undefined)) {
    const res = await s.list({ ...q, end_time: 'none', page_size: '3' }, s.teamA.key);
    const expected = s.all.filter(mine).filter((r) => (q.model === undefined || r.model === q.model) && (q.provider === undefined || r.provider === q.provider) && (q.api_key_id === undefined || r.api_key_id === q.api_key_id) && (q.trace_id === undefined || r.trace_id === q.trace_id));
    t.match(res.body, { total: expected.length, total_exact: true }, `${JSON.stringify(q)}: the index count is the workspace's`);
    t.same(ids(res.body), newest(expected).slice(0, 3));
  }
  const onlyB = s.all.find((r) => r.workspace_id === s.teamB.id)!;
  t.equal((await s.list({ workspace_id: s.teamB.id, model: onlyB.model! })).body.total, s.all.filter((r) => r.workspace_id === s.teamB.id && r.model === onlyB.model).length, 'an organisation key sees the workspace it names');
  // Another workspace's id as a cursor only moves the window; it reveals nothing of theirs.
  const theirs = s.all.find((r) => r.workspace_id === s.teamB.id)!;
  const fromTheirs = await s.list({ cursor: theirs.id, page_size: '500' }, s.teamA.key);
  t.ok((fromTheirs.body.data as Json[]).every((r) => r.workspace_id === s.teamA.id));
  t.equal((await s.list({ workspace_id: 'team-b' }, s.teamA.key)).status, 403, 'a workspace key cannot name another workspace');
});

t.test('a record inserted via POST /v1/logs is indexed', async (t) => {
  const s = await seed(t);
  const res = await request(`${s.gw.url}/v1/logs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': s.teamA.key },
    body: JSON.stringify({ request: { url: 'https://x.test/v1/chat', body: { model: 'custom-model' } }, response: { status: 418, body: {} }, metadata: { trace_id: 'custom-indexed' } }),
  });
  t.equal(res.statusCode, 200);
  const id = ((await res.body.json()) as Json).log_ids[0] as string;
  const entries = allKeys(s.idx).filter((k) => k[2] === id).map((k) => k.slice(0, 2));
  t.same(
    entries.sort(),
    [
      [INDEXED.api_key_id, (s.db.get(id) as StoredLog).api_key_id],
      [INDEXED.model, 'custom-model'],
      [INDEXED.status, '418'],
      [INDEXED.trace_id, 'custom-indexed'],
      [INDEXED.workspace, s.teamA.id],
    ].sort(),
    'indexed under each of its fields',
  );
  const open = { end_time: 'none' };
  t.same(ids((await s.list({ ...open, trace_id: 'custom-indexed' }, s.teamA.key)).body), [id]);
  t.same(ids((await s.list({ ...open, model: 'custom-model' })).body), [id]);
  t.same(ids((await s.list({ ...open, status: '418' }, s.teamA.key)).body), [id]);
  t.equal((await s.list({ ...open, trace_id: 'custom-indexed' }, s.teamB.key)).body.total, 0, 'not through another workspace');
});

t.test('a store from before partitions: its `logs#idx` is the oldest partition, with its legacy entries, until its records are gone', async (t) => {
  const root = open({ path: join(tempDir(), 'sparse.mdb'), maxDbs: 64 });
  const db = openLogDb(root);
  const legacy = root.openDB<unknown, Key>({ name: LOG_INDEX_DB });
  const base = Date.now() - 60_000;
  const legacyIds: string[] = [];
  // Records indexed the way it was done before sparse entries: every status and trace id has an entry.
  for (let i = 0; i < 4; i++) {
    const r = rec(idAt(base + i, i), base + i);
    r.trace_id = r.id;
    legacyIds.push(r.id);
    await db.put(r.id, r);
    for (const [field, value] of [[INDEXED.status, '200'], [INDEXED.trace_id, r.id], [INDEXED.model, r.model!], [INDEXED.provider, r.provider!], [INDEXED.api_key_id, r.api_key_id!]] as const) {
      await legacy.put([field, value, r.id], null);
    }
  }
  await legacy.put(['~backfill'], { cursor: legacyIds.at(-1)!, done: true });
  const idx = openLogIndex(root);
  t.same(idx.parts(), [{ slot: 0, first: '', records: 4 }], 'the old database is the one partition, holding the records so far');
  await startBackfill(db, idx, silent).finished;
  t.same(idx.meta(BACKFILL_META), { cursor: legacyIds.at(-1)!, done: true }, "the backfill's progress moves to the registry");
  const fresh = Array.from({ length: 20 }, (_, i) => {
    const r = rec(idAt(base + 100 + i, 100 + i), base + 100 + i, { status: i % 4 === 0 ? 503 : 200 });
    if (i % 2 === 0) r.trace_id = r.id;
    return r;
  });
  t.same(await writeLogs(db, idx, fresh, 4), { failed: 0 });
  t.same(
    idx.parts().map((p) => [p.slot, p.first]),
    [
      [0, ''],
      [1, fresh[0]!.id],
    ],
    'the first batch rolled to a new partition: the old one was full',
  );
  const entriesOf = (id: string): string[] => allKeys(idx).filter((k) => k[2] === id).map((k) => k[0]!);
  const ok = fresh[1]!;
  t.same(entriesOf(ok.id).sort(), [INDEXED.api_key_id, INDEXED.model, INDEXED.provider, INDEXED.trace_id].sort(), 'a 200 has no status entry');
  t.same(entriesOf(fresh[0]!.id).sort(), [INDEXED.api_key_id, INDEXED.model, INDEXED.provider, INDEXED.status].sort(), 'a 503 has one; a trace id equal to the id has none');
  const walk = async (terms: Array<{ field: IndexField; values: string[] }>, match: (r: StoredLog) => boolean, newestFirst = true): Promise<{ ids: string[]; path: string }> => {
    const state = newWalkState();
    const out: string[] = [];
    for await (const chunk of queryLogs({ db, idx }, { terms, newestFirst, match }, state)) out.push(...chunk.map((r) => r.id));
    return { ids: out, path: state.path };
  };
  const all = [...legacyIds.map((id) => db.get(id)!), ...fresh];
  const ok200 = await walk([{ field: INDEXED.status, values: ['200'] }], (r) => r.status === 200);
  t.same(ok200.ids, all.filter((r) => r.status === 200).map((r) => r.id).reverse(), 'status 200: every record, through the time order');
  t.equal(ok200.path, 'time');
  const failed = await walk([{ field: INDEXED.status, values: ['503'] }], (r) => r.status === 503);
  t.same(failed.ids, fresh.filter((r) => r.status === 503).map((r) => r.id).reverse());
  t.equal(failed.path, INDEXED.status, 'an error status walks its index');
  for (const r of [fresh[0]!, fresh[1]!, db.get(legacyIds[2]!)!]) {
    const found = await walk([{ field: INDEXED.trace_id, values: [r.trace_id] }], (x) => x.trace_id === r.trace_id, false);
    t.same(found.ids, [r.id], `trace ${r.trace_id === r.id ? 'equal to its id' : 'of its own'}: found once`);
    t.equal(found.path, INDEXED.trace_id);
  }
  const model = await walk([{ field: INDEXED.model, values: ['gpt-4o'] }], () => true, false);
  t.same(model.ids, all.map((r) => r.id), 'one walk across the old partition and the new one');
  t.equal(await sweep(db, { cutoffMs: base + 50, maxRecords: 1000, limit: 100 }, idx), 4, 'the legacy records go');
  for (const id of legacyIds) t.same(entriesOf(id), [], 'with their status and own-trace entries: the old partition is cleared');
  t.same((idx.slots[0]!.getStats() as { entryCount: number }).entryCount, 0, 'and `logs#idx` is empty, backfill key and all');
  t.same(idx.parts().map((p) => p.slot), [1]);
  t.same((await walk([{ field: INDEXED.model, values: ['gpt-4o'] }], () => true, false)).ids, fresh.map((r) => r.id));
  await root.close();
});

t.test('requests logged by the gateway are indexed', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - logging: {flush_ms: 20}\n  - auth\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const refused = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-trace-id': 'refused-1' }, body: '{}' });
  t.equal(refused.statusCode, 401);
  await refused.body.dump();
  let found: Json = {};
  for (let i = 0; i < 100 && found.total !== 1; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const res = await request(`${gw.url}/v1/logs?trace_id=refused-1&status=401`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    found = (await res.body.json()) as Json;
  }
  t.match(found, { total: 1, data: [{ trace_id: 'refused-1', status: 401 }] });
});

t.test('exports read through the indexes: the same records as the filter says', async (t) => {
  const s = await seed(t);
  const admin = async (method: string, path: string, body?: unknown, key = ADMIN_KEY): Promise<Json> => {
    const res = await request(`${s.gw.url}/v1${path}`, { method: method as 'GET', headers: { 'content-type': 'application/json', 'x-gateway-api-key': key }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    return String(res.headers['content-type']).startsWith('application/json') ? (JSON.parse(text) as Json) : { text };
  };
  const made = await admin('POST', '/logs/exports', { filters: { ai_model: 'claude-3,gpt-4o-mini', status_code: '200' }, requested_data: ['id'] }, s.teamB.key);
  const expected = s.all.filter((r) => r.workspace_id === s.teamB.id && (r.model === 'claude-3' || r.model === 'gpt-4o-mini') && r.status === 200).map((r) => r.id);
  t.equal(made.total, expected.length);
  await admin('POST', `/logs/exports/${made.id}/start`, undefined, s.teamB.key);
  let status = '';
  for (let i = 0; i < 100 && status !== 'success'; i++, await new Promise((r) => setTimeout(r, 20))) status = (await admin('GET', `/logs/exports/${made.id}`, undefined, s.teamB.key)).status;
  const file = await admin('GET', `/logs/exports/${made.id}/download`, undefined, s.teamB.key);
  t.same((file.text as string).trimEnd().split('\n').map((l) => (JSON.parse(l) as Json).id), expected, 'oldest first, only its workspace');
});

t.test('retention removes records by key; their entries are never seen again and go with their partition', async (t) => {
  const root = open({ path: join(tempDir(), 'ret-idx.mdb'), maxDbs: 64 });
  const db = openLogDb(root);
  const idx = openLogIndex(root);
  const now = Date.now();
  const old = [1, 2, 3].map((i) => rec(idAt(now - 40 * 86_400_000 + i, i), now - 40 * 86_400_000 + i, { model: 'old-model', workspace_id: 'ws-1' }));
  const fresh = [1, 2].map((i) => rec(idAt(now - 5000 + i, 10 + i), now - 5000 + i, { model: 'new-model', workspace_id: 'ws-1' }));
  t.same(await writeLogs(db, idx, old.slice(0, 2), 2), { failed: 0 });
  t.same(await writeLogs(db, idx, [old[2]!, ...fresh], 2), { failed: 0 });
  t.same(
    idx.parts().map((p) => p.first),
    ['', old[2]!.id],
    'two partitions',
  );
  const entriesOf = (id: string): string[][] => allKeys(idx).filter((k) => k[2] === id);
  t.ok(entriesOf(old[0]!.id).length >= 4, 'indexed first');
  const walk = async (): Promise<string[]> => {
    const state = newWalkState();
    const out: string[] = [];
    for await (const chunk of queryLogs({ db, idx }, { terms: [{ field: INDEXED.workspace, values: ['ws-1'] }], newestFirst: false, match: () => true }, state)) out.push(...chunk.map((r) => r.id));
    t.equal(state.path, INDEXED.workspace, 'through the index');
    t.equal(state.visited, out.length, 'visiting no entry of a removed record');
    return out;
  };
  t.equal(await sweep(db, { cutoffMs: now - 40 * 86_400_000 + 3, maxRecords: 1000, limit: 100 }, idx), 2);
  t.same(await walk(), [old[2]!.id, ...fresh.map((r) => r.id)]);
  t.equal(idx.count(INDEXED.workspace, 'ws-1', '', '\uffff', 100), 3, 'the count is of records kept');
  for (const r of old.slice(0, 2)) t.same(entriesOf(r.id), [], 'the first partition went with its last record');
  t.same(idx.parts().map((p) => p.first), [old[2]!.id]);
  t.equal(await sweep(db, { cutoffMs: now - 30 * 86_400_000, maxRecords: 1000, limit: 100 }, idx), 1);
  t.ok(entriesOf(old[2]!.id).length >= 4, 'a removed record of the newest partition leaves its entries there');
  for (const r of fresh) t.ok(entriesOf(r.id).length >= 4, 'the others keep theirs');
  t.same(await walk(), fresh.map((r) => r.id), 'and a walk never meets them');
  t.equal(idx.count(INDEXED.workspace, 'ws-1', '', '\uffff', 100), 2, 'nor a count');
  t.equal(await sweep(db, { cutoffMs: now, maxRecords: 1000, limit: 100 }, idx), 2, 'an age past every record');
  t.same(await walk(), [], 'nothing through the index of an empty store');
  t.equal(idx.count(INDEXED.workspace, 'ws-1', '', '\uffff', 100), 0);
  t.equal(idx.parts().length, 1, 'the newest partition stays');
  await root.close();
});

t.test('records written before the indexes are backfilled in slices, once', async (t) => {
  const root = open({ path: join(tempDir(), 'backfill.mdb'), maxDbs: 64 });
  const db = openLogDb(root);
  const idx = openLogIndex(root);
  const base = Date.now() - 100_000;
  const before = Array.from({ length: 1200 }, (_, i) => rec(idAt(base + i, i), base + i, { model: i % 2 === 0 ? 'even' : 'odd' }));
  await Promise.all(before.map((r) => db.put(r.id, r)));
  const fill = startBackfill(db, idx, silent);
  await fill.finished;
  const even = [];
  for await (const chunk of queryLogs({ db, idx }, { terms: [{ field: INDEXED.model, values: ['even'] }], newestFirst: true, match: (r) => r.model === 'even' }, newWalkState())) even.push(...chunk);
  t.equal(even.length, 600, 'every older record is reachable through the index');
  t.equal(idx.count(INDEXED.model, 'odd', '', '\uffff', 10_000), 600);
  const again = startBackfill(db, idx, silent);
  await again.finished;
  t.same(idx.meta(BACKFILL_META), { cursor: before.at(-1)!.id, done: true }, 'done, and remembered');
  await root.close();
  const fresh = open({ path: join(tempDir(), 'backfill-empty.mdb'), maxDbs: 64 });
  const emptyIdx = openLogIndex(fresh);
  await startBackfill(openLogDb(fresh), emptyIdx, silent).finished;
  t.match(emptyIdx.meta(BACKFILL_META), { done: true }, 'a fresh database needs no backfill');
  await fresh.close();
});

t.test('the walk is bounded: a filter matching nothing in a wide window stops with a cursor', async (t) => {
  const root = open({ path: join(tempDir(), 'bound.mdb'), maxDbs: 64 });
  const db = openLogDb(root);
  const idx = openLogIndex(root);
  const base = Date.now() - 1_000_000;
  t.same(await writeLogs(db, idx, Array.from({ length: 3000 }, (_, i) => rec(idAt(base + i, i), base + i, { metadata: { n: String(i) } })), 10_000), { failed: 0 });
  const { listLogs } = await import('../plugins/logging/log-list.js');
  // `metadata` has no index: the time order is walked, and the visit budget is what stops it.
  const query = { metadata: '{"n":"5"}', current_page: 0, page_size: 10 };
  const whole = await listLogs({ db, idx }, query, null);
  t.same(whole.data.map((r) => r.metadata.n), ['5']);
  t.match(whole, { total: 1, total_exact: true, has_more: false, next_cursor: null }, 'within the budget: exact');
  const limits = { visit: 1000, total: 10_000 };
  const first = await listLogs({ db, idx }, query, null, limits);
  t.match(first, { data: [], total: 0, total_exact: false, has_more: true }, 'the budget stops an empty walk');
  t.type(first.next_cursor, 'string', 'with a cursor where it stopped');
  let cursor = first.next_cursor;
  const found: Array<string | undefined> = [];
  for (let i = 0; i < 10 && cursor !== null; i++) {
    const next = await listLogs({ db, idx }, { ...query, cursor }, null, limits);
    found.push(...next.data.map((r) => r.metadata.n));
    cursor = next.next_cursor;
  }
  t.same(found, ['5'], 'following the cursor finds it');
  // A time bound: the index cannot count alone, the walk counts up to the bound.
  const since = new Date(base - 1000).toISOString();
  const counted = await listLogs({ db, idx }, { start_time: since, current_page: 0, page_size: 10 }, null, { visit: 100_000, total: 50 });
  // Counting past the page also stops after a few ms, so under load it may stop before the bound.
  t.match(counted, { total_exact: false, has_more: true }, 'past the page, total is a lower bound');
  t.ok(counted.total >= 10 && counted.total <= 60, `total stops at page + bound at the most (got ${counted.total})`);
  const exact = await listLogs({ db, idx }, { current_page: 0, page_size: 10 }, null, { visit: 100_000, total: 50 });
  t.match(exact, { total: 3000, total_exact: true, has_more: true }, 'without a time bound the index counts exactly');
  t.equal(exact.data.length, 10);
  await root.close();
});

t.test('index partitions: every range read across them is the brute-force answer, through rolls, releases, reused slots and full slots', async (t) => {
  const root = open({ path: join(tempDir(), 'parts.mdb'), maxDbs: 64 });
  const db = openLogDb(root);
  const idx = openLogIndex(root);
  const base = Date.now() - 3_600_000;
  let n = 0;
  const live: StoredLog[] = [];
  const write = async (count: number, partSize: number): Promise<void> => {
    const batch = Array.from({ length: count }, () => {
      const i = n++;
      return rec(idAt(base + i * 10, i), base + i * 10, { workspace_id: i % 3 === 0 ? 'ws-a' : 'ws-b', model: `m${i % 4}` });
    });
    t.same(await writeLogs(db, idx, batch, partSize), { failed: 0 });
    live.push(...batch);
  };
  /** Compares every kind of read with the records kept: directions, bounds inside and across partitions, cursors, limits, counts. */
  const check = (label: string): void => {
    const ids = live.map((r) => r.id);
    const cuts = ['', ids[0] ?? '', ids[Math.floor(ids.length / 3)] ?? '', ids[Math.floor(ids.length / 2)] ?? '', ids.at(-2) ?? '', '\uffff'];
    let failures = 0;
    for (const [field, value, has] of [
      [INDEXED.workspace, 'ws-a', (r: StoredLog) => r.workspace_id === 'ws-a'],
      [INDEXED.model, 'm1', (r: StoredLog) => r.model === 'm1'],
    ] as const) {
      for (const low of cuts) {
        for (const high of cuts) {
          if (high <= low) continue;
          const want = live.filter((r) => has(r) && r.id >= low && r.id < high).map((r) => r.id);
          // Reverse reads take lmdb's bounds as before partitions: `high` inclusive, `low` exclusive (queryLogs re-checks both).
          const wantReverse = live.filter((r) => has(r) && r.id > low && r.id <= high).map((r) => r.id).reverse();
          for (const reverse of [false, true]) {
            const got = idx.entries({ field, value, low, high, reverse }).map((e) => e.id);
            if (JSON.stringify(got) !== JSON.stringify(reverse ? wantReverse : want)) failures++;
            // Pages of 7 after a cursor: the same ids, each once.
            const paged: string[] = [];
            for (let after: string | undefined; ; ) {
              const page = idx.entries({ field, value, low, high, reverse, after, limit: 7 });
              paged.push(...page.map((e) => e.id));
              if (page.length < 7) break;
              after = page.at(-1)!.id;
            }
            if (JSON.stringify(paged) !== JSON.stringify(got)) failures++;
          }
          if (idx.count(field, value, low, high, 10_000) !== want.length) failures++;
          if (idx.count(field, value, low, high, 5) !== Math.min(5, want.length)) failures++;
        }
      }
    }
    t.equal(failures, 0, `${label}: every read matches (${live.length} records, ${idx.parts().length} partitions)`);
  };

  for (let i = 0; i < 10; i++) await write(10, 30);
  t.same(idx.parts().map((p) => p.slot), [0, 1, 2, 3], 'a partition per 30 records (each rolled at a batch)');
  check('after rolls');

  const excess = await sweep(db, { cutoffMs: 0, maxRecords: 45, limit: 1000 }, idx);
  t.equal(excess, 55);
  live.splice(0, 55);
  t.same(idx.parts().map((p) => p.slot), [1, 2, 3], "the partition whose records are all gone was released; the next one's oldest are gone too");
  t.equal((idx.slots[0]!.getStats() as { entryCount: number }).entryCount, 0, 'its slot is empty');
  check('after a release, with entries of removed records left in the oldest partition');

  for (let i = 0; i < 6; i++) await write(10, 30);
  t.same(idx.parts().map((p) => p.slot), [1, 2, 3, 0, 4], 'the freed slot was taken again, for the newest ids');
  check('with a reused slot');

  for (let i = 0; i < 30; i++) await write(5, 5);
  t.equal(idx.parts().length, INDEX_SLOTS, 'every slot in use');
  const newest = idx.parts().at(-1)!;
  t.ok(newest.records > 5, `with no free slot the newest partition keeps growing (${newest.records} records)`);
  check('with every slot in use');

  t.equal(await sweep(db, { cutoffMs: 0, maxRecords: 20, limit: 1000 }, idx), live.length - 20);
  live.splice(0, live.length - 20);
  t.ok(idx.parts().length < INDEX_SLOTS, 'slots freed');
  check('after a large sweep');
  await write(10, 5);
  check('rolled again into a freed slot');
  await root.close();
});
