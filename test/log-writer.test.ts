/**
 * The log writer (log-writer.ts) hands records to its thread (log-thread.ts), which writes them
 * with their index entries into the store this thread reads. Real LMDB, a real worker thread.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { tempDir } from './helpers/gateway.js';
import { createLogger } from '../core/logger.js';
import { openLogDb, type StoredLog } from '../plugins/logging/log-db.js';
import { BATCH, createLogWriter, type LogWriterOptions } from '../plugins/logging/log-writer.js';
import { openLogIndex } from '../plugins/logging/log-parts.js';
import { sweepAll } from '../plugins/logging/retention.js';
import { logStats } from '../plugins/logging/stats.js';

const record = (id: string, n: number): StoredLog =>
  ({ id, trace_id: `t-${n}`, status: n % 10 === 0 ? 503 : 200, workspace_id: 'ws-1', model: `model-${n % 3}`, provider: 'openai', api_key_id: null }) as unknown as StoredLog;

function setup(t: Test, overrides: Partial<LogWriterOptions<number>> = {}) {
  const path = join(tempDir(), 'writer.mdb');
  const root: RootDatabase = open({ path, maxDbs: 128 });
  const db = openLogDb(root);
  const lines: Array<{ level: string; msg: string }> = [];
  const log = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as { level: string; msg: string }) });
  const writer = createLogWriter<number>({
    path,
    // Small partitions: the thread rolls them as it writes.
    partSize: 100,
    queueMax: 10_000,
    flushMs: 60_000,
    log,
    onCommitted: () => db.resetReadTxn(),
    finish: (n) => record(`rec-${String(n).padStart(5, '0')}`, n),
    ...overrides,
  });
  t.teardown(async () => {
    await writer.close();
    await root.close();
  });
  return { root, db, writer, lines };
}

t.test('records and their index entries are written by the thread, readable here once flush resolves', async (t) => {
  const { root, db, writer } = setup(t);
  // Five batches: the thread rolls a partition of 100 records at each.
  for (let i = 0; i < 500; i++) {
    writer.push(i);
    if (i % 100 === 99) await writer.flush();
  }
  t.equal(writer.queued, 0, 'nothing left to write');
  t.equal([...db.getKeys({})].length, 500, 'every record written once');
  t.equal(db.get('rec-00499')?.trace_id, 't-499', 'the last one complete');
  const idx = openLogIndex(root);
  t.equal(idx.count('md', 'model-1', '', '\uffff', 10_000), 167, 'model index entries for every record of that model');
  t.equal(idx.count('st', '503', '', '\uffff', 10_000), 50, 'status entries for the 503s only (2xx are not indexed)');
  const parts = idx.parts();
  t.same(
    parts.map((p) => p.first),
    ['', 'rec-00100', 'rec-00200', 'rec-00300', 'rec-00400'],
    'the thread rolled partitions',
  );
  t.equal(
    parts.reduce((sum, p) => sum + p.records, 0),
    500,
    'each record counted in one partition',
  );
  t.equal(logStats.dropped, 0, 'nothing dropped');
});

t.test('batches handed over while a commit is in flight are all written, each acknowledged', async (t) => {
  // Sixty batches of 32 within one turn: the thread writes them in its transactions as they come.
  const { db, writer } = setup(t);
  const acks: Array<Promise<void>> = [];
  for (let i = 0; i < 60 * 32; i++) {
    writer.push(i);
    if (i % 32 === 31) acks.push(writer.flush());
  }
  await Promise.all(acks);
  t.equal([...db.getKeys({})].length, 60 * 32);
  t.equal(writer.queued, 0);
});

t.test('a full batch leaves without waiting for the timer', async (t) => {
  const { db, writer } = setup(t);
  for (let i = 0; i < BATCH + 8; i++) writer.push(i);
  const deadline = Date.now() + 5000;
  while ([...db.getKeys({})].length < BATCH && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    db.resetReadTxn();
  }
  t.ok([...db.getKeys({})].length >= BATCH, `the first ${BATCH} records are written with flush_ms a minute away`);
});

t.test('queue_max bounds the records queued here and in the thread together', async (t) => {
  const { db, writer } = setup(t, { queueMax: 50 });
  const before = logStats.dropped;
  let accepted = 0;
  for (let i = 0; i < 120; i++) if (writer.push(i)) accepted++;
  t.equal(accepted, 50, 'the first 50 are taken');
  t.equal(logStats.dropped - before, 70, 'the rest are dropped and counted');
  t.ok(writer.queued <= 50, 'the backlog never passes the bound');
  await writer.flush();
  t.equal([...db.getKeys({})].length, 50, 'what was taken is written');
  t.ok(writer.push(200), 'room again once written');
});

t.test('a record the store cannot take costs only itself', async (t) => {
  const { db, writer, lines } = setup(t, { finish: (n) => record(n === 3 ? `too-long-${'x'.repeat(3000)}` : `rec-${n}`, n) });
  const before = logStats.dropped;
  for (let i = 0; i < 10; i++) writer.push(i);
  await writer.flush();
  t.equal([...db.getKeys({})].length, 9, 'the other nine are written');
  t.equal(logStats.dropped - before, 1, 'the one is counted as dropped');
  t.ok(
    lines.some((l) => l.level === 'error' && l.msg === 'log batch write failed'),
    'and logged',
  );
});

t.test("the thread's young generation is bounded: V8 would grow it to 32 MB, all resident, for a few batches' objects", async (t) => {
  const { writer, lines } = setup(t, { threadFile: new URL('./helpers/limits-log-thread.js', import.meta.url) });
  writer.push(1);
  await writer.flush();
  const reported = lines.find((l) => l.msg === 'thread limits') as { young_mb?: number | null } | undefined;
  t.ok(reported, 'the thread started and reported');
  t.ok(typeof reported?.young_mb === 'number' && reported.young_mb > 0 && reported.young_mb <= 16, `young generation limit ${String(reported?.young_mb)} MB`);
});

t.test('a thread that dies loses its batch, counted; the next batch gets a new thread', async (t) => {
  const { writer, lines } = setup(t, { threadFile: new URL('./helpers/dying-log-thread.js', import.meta.url) });
  const before = logStats.dropped;
  for (let i = 0; i < 5; i++) writer.push(i);
  await writer.flush();
  t.equal(logStats.dropped - before, 5, 'the lost batch is counted');
  t.equal(writer.queued, 0, 'and no longer held');
  t.ok(
    lines.some((l) => l.msg === 'log thread stopped: its batches are lost'),
    'and logged',
  );
  for (let i = 0; i < 3; i++) writer.push(i);
  await writer.flush();
  t.equal(logStats.dropped - before, 8, 'a second thread took (and lost) the next batch: the writer did not hang');
});

t.test('retention runs in the thread: the oldest records past max_records go, index partitions with them', async (t) => {
  const { root, db, writer } = setup(t);
  for (let i = 0; i < 500; i++) {
    writer.push(i);
    if (i % 100 === 99) await writer.flush();
  }
  const idx = openLogIndex(root);
  const byModel = (): number => idx.count('md', 'model-1', '', '\uffff', 10_000);
  const oldest = idx.parts()[0]!.slot;
  const entriesIn = (slot: number): number => (idx.slots[slot]!.getStats() as { entryCount: number }).entryCount;
  t.ok(entriesIn(oldest) > 0);
  t.equal(byModel(), 167);
  t.equal(await writer.sweep({ cutoffMs: 0, maxRecords: 450, limit: 100 }), 50, 'one slice: the excess of 50');
  t.equal([...db.getKeys({})].length, 450, 'readable here at once');
  t.equal([...db.getKeys({ limit: 1 })][0], 'rec-00050', 'the oldest went');
  t.equal(byModel(), 150, 'with their index entries');
  // A backlog larger than a slice is worked off in one sweep: 250 in slices of 100.
  t.equal(await sweepAll((o) => writer.sweep(o), { cutoffMs: 0, maxRecords: 200, limit: 100 }, 0), 250);
  t.equal([...db.getKeys({})].length, 200);
  t.equal([...db.getKeys({ limit: 1 })][0], 'rec-00300');
  t.equal(byModel(), 67, 'index entries of the 200 left only');
  t.same(
    idx.parts().map((p) => p.first),
    ['rec-00300', 'rec-00400'],
    'the partitions whose records all went were released',
  );
  t.equal(entriesIn(oldest), 0, 'their entries with them');
  for (let i = 500; i < 520; i++) writer.push(i);
  t.equal(await writer.sweep({ cutoffMs: 0, maxRecords: 200, limit: 100 }), 20, 'a sweep comes after the records pushed before it');
});

t.test('a sweep whose thread dies is rejected, not left waiting', async (t) => {
  const { writer } = setup(t, { threadFile: new URL('./helpers/dying-log-thread.js', import.meta.url) });
  await t.rejects(writer.sweep({ cutoffMs: 0, maxRecords: 10, limit: 100 }), /log thread stopped \(exit code 7\) before its retention sweep was done/);
});

t.test('close writes what is queued and stops the thread', async (t) => {
  const path = join(tempDir(), 'close.mdb');
  const root = open({ path, maxDbs: 128 });
  t.teardown(() => root.close());
  const db = openLogDb(root);
  const writer = createLogWriter<number>({ path, partSize: 10_000, queueMax: 100, flushMs: 60_000, log: createLogger({ level: 'error' }), finish: (n) => record(`c-${n}`, n) });
  for (let i = 0; i < 10; i++) writer.push(i);
  await writer.close();
  db.resetReadTxn();
  t.equal([...db.getKeys({})].length, 10, 'every queued record is durable');
  t.notOk(writer.push(11), 'a closed writer takes nothing');
  t.equal(await writer.sweep({ cutoffMs: 0, maxRecords: 1, limit: 100 }), 0, 'nor sweeps');
  await db.put('after', record('after', 0));
  t.ok(db.get('after'), 'the store stays usable here after the thread closed its handle');
});
