/**
 * The logs database's shared record shapes (log-db.ts): records are stored without their field
 * names, the shapes live outside `logs` (scans and counts never meet them), records stored before
 * the shapes were shared still read, and a client's metadata keys never take a shared slot.
 */
import t from 'tap';
import { join } from 'node:path';
import { open } from 'lmdb';
import { tempDir } from './helpers/gateway.js';
import { openLogDb, countRecords, type StoredLog } from '../plugins/logging/log-db.js';

const record = (id: string, metadata: Record<string, string> = {}): Partial<StoredLog> => ({
  id,
  trace_id: `trace-${id}`,
  workspace_id: 'ws-1',
  metadata,
  model: 'gpt-4o-mini',
  status: 200,
  latency: { total_ms: 1.5, upstream_ms: 1, gateway_ms: 0.5, ttfb_ms: 1.2 },
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cached_tokens: 0, reasoning_tokens: 0, source: 'upstream' },
});

t.test('records written before shared shapes read back unchanged; new ones are small', async (t) => {
  const path = join(tempDir(), 'shapes.mdb');
  const before = open({ path, maxDbs: 8 });
  const plain = before.openDB<Partial<StoredLog>, string>({ name: 'logs' });
  await plain.put('a-old', record('a-old', { team: 'x' }));
  const plainSize = plain.getBinary('a-old')!.length;
  await before.close();

  const root = open({ path, maxDbs: 8 });
  t.teardown(() => root.close());
  const db = openLogDb(root);
  t.equal(openLogDb(root), db, 'one handle per environment');
  t.same(db.get('a-old'), record('a-old', { team: 'x' }), 'an old record decodes unchanged');
  await db.put('b-new', record('b-new', { team: 'y' }) as StoredLog);
  await db.put('c-new', record('c-new', { team: 'z' }) as StoredLog);
  t.same(db.get('c-new'), record('c-new', { team: 'z' }), 'a new record round-trips');
  const newSize = db.getBinary('c-new')!.length;
  t.ok(newSize < plainSize / 2, `a record is stored without its field names (${newSize} B, was ${plainSize} B)`);

  t.same([...db.getKeys({ start: undefined, end: undefined })], ['a-old', 'b-new', 'c-new'], 'a scan meets records only');
  t.same([...db.getKeys({ start: undefined, end: undefined, reverse: true })], ['c-new', 'b-new', 'a-old'], 'a reverse scan too');
  t.equal(countRecords(db), 3, 'the entry count is the records');

  // A fresh handle (another process) reads the shapes from the store.
  const other = open({ path, maxDbs: 8 });
  t.teardown(() => other.close());
  t.same(openLogDb(other).get('b-new'), record('b-new', { team: 'y' }), 'another handle decodes with the stored shapes');
});

t.test('unbounded metadata shapes stay inline: every record still decodes', async (t) => {
  const root = open({ path: join(tempDir(), 'meta.mdb'), maxDbs: 8 });
  t.teardown(() => root.close());
  const db = openLogDb(root);
  const ids = Array.from({ length: 200 }, (_, i) => `m-${String(i).padStart(4, '0')}`);
  // 200 distinct key sets: far more than msgpackr's 32 shared slots.
  await Promise.all(ids.map((id, i) => db.put(id, record(id, { [`k${i}`]: String(i) }) as StoredLog)));
  const back = ids.map((id) => db.get(id));
  t.same(back, ids.map((id, i) => record(id, { [`k${i}`]: String(i) })), 'all 200 records decode with their own metadata');
  const shapes = root.openDB<unknown[], string>({ name: 'logs#shapes' }).get('shapes') ?? [];
  t.ok(shapes.length <= 4, `only the gateway's shapes are shared (${shapes.length})`);
});
