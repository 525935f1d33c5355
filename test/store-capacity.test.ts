/**
 * The store's size measurement (core/store/capacity.ts) on a real LMDB environment: the timer's
 * measurement sees what was written, and reads one database per event-loop turn, so no request
 * waits out the statistics of every database at once; a store far from its limit is measured less
 * often than one near it.
 */
import t from 'tap';
import { rmSync } from 'node:fs';
import { open } from 'lmdb';
import { createCapacity, MEASURE_AT_LEAST_EVERY_MS, MEASURE_EVERY_MS, nextMeasureIn } from '../core/store/capacity.js';
import { tempDir } from './helpers/gateway.js';

t.test('the timer measures every database, one per event-loop turn', async (t) => {
  const dir = tempDir();
  const root = open({ path: dir });
  const capacity = createCapacity(root, 64 * 1024 * 1024);
  t.teardown(async () => {
    capacity.close();
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const dbs = ['a', 'b', 'c', 'd'].map((name) => root.openDB<string, string>({ name }));
  const before = capacity.measure();

  // Each statistics read notes whether another one ran in the same turn.
  let inTurn = false;
  let sameTurn = 0;
  let reads = 0;
  for (const db of dbs) {
    const getStats = db.getStats.bind(db);
    db.getStats = (() => {
      reads++;
      if (inTurn) sameTurn++;
      inTurn = true;
      queueMicrotask(() => (inTurn = false));
      return getStats();
    }) as typeof db.getStats;
  }

  const big = 'x'.repeat(2000);
  for (const db of dbs) {
    await db.transaction(() => {
      for (let i = 0; i < 200; i++) void db.put(`k${i}`, big);
    });
  }
  await new Promise((r) => setTimeout(r, MEASURE_EVERY_MS * 1.5));
  t.ok(reads >= dbs.length, `the timer read every database (${reads} reads)`);
  t.equal(sameTurn, 0, 'never two in one turn');
  t.ok(capacity.used() > before + dbs.length * 200 * 2000, `the growth is seen (${before} → ${capacity.used()} bytes)`);
});

const MB = 1024 * 1024;

t.test('how soon the next measurement comes: by the room left and the growth seen', async (t) => {
  t.equal(nextMeasureIn(0, 0), MEASURE_EVERY_MS, 'a full store: every second');
  t.equal(nextMeasureIn(-5 * MB, 0), MEASURE_EVERY_MS, 'past its limit: every second');
  t.equal(nextMeasureIn(64 * MB, 0), MEASURE_EVERY_MS, 'within 64 MB of the limit: every second');
  t.equal(nextMeasureIn(640 * MB, 0), 10_000, '640 MB of room, quiet: half of it at 32 MB a second is 10 s away');
  t.equal(nextMeasureIn(16 * 1024 * MB, 0), MEASURE_AT_LEAST_EVERY_MS, 'a nearly empty 16 GB store: the longest interval');
  // 100 MiB a second measured last time, assumed four times that.
  const fast = (100 * MB) / 1000;
  t.equal(nextMeasureIn(16 * 1024 * MB, fast), 20_480, 'a fast-growing store is measured sooner');
  t.equal(nextMeasureIn(640 * MB, fast), MEASURE_EVERY_MS, 'and every second once its room is short at that pace');
  t.equal(nextMeasureIn(Number.NaN, 0), MEASURE_EVERY_MS, 'no number: every second');
});

t.test('a store far from its limit is not measured every second; one near it is', async (t) => {
  const dir = tempDir();
  const root = open({ path: dir });
  const far = createCapacity(root, 16 * 1024 * MB);
  const near = createCapacity(root, 2 * MB);
  t.teardown(async () => {
    far.close();
    near.close();
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // Both capacities measure the same environment: count their passes together by the root's
  // statistics reads (each pass begins with one).
  const db = root.openDB<string, string>({ name: 'only' });
  await db.put('k', 'x'.repeat(1000));
  let rootReads = 0;
  const getStats = root.getStats.bind(root);
  root.getStats = (() => {
    rootReads++;
    return getStats();
  }) as typeof root.getStats;
  await new Promise((r) => setTimeout(r, MEASURE_EVERY_MS * 3.5));
  // The near one (2 MB: its whole room is less than a second at the growth assumed): a pass each
  // second, three in 3.5 s; the far one: its first pass a second after open, then none for 30 s.
  t.ok(near.used() > 0, 'the near store was measured');
  t.ok(far.used() > 0, 'the far store was measured once');
  t.ok(rootReads >= 4 && rootReads <= 5, `four passes in 3.5 s: three of the near store, one of the far (${rootReads})`);
});
