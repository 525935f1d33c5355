/**
 * The store's size measurement (core/store/capacity.ts) on a real LMDB environment: the timer's
 * measurement sees what was written, and reads one database per event-loop turn, so no request
 * waits out the statistics of every database at once.
 */
import t from 'tap';
import { rmSync } from 'node:fs';
import { open } from 'lmdb';
import { createCapacity, MEASURE_EVERY_MS } from '../core/store/capacity.js';
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
