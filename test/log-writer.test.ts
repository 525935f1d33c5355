/**
 * The log writer's flush (log-writer.ts): a large batch is encoded a slice per event-loop turn,
 * so requests in flight never wait behind the whole batch, and every record is still written once.
 */
import t from 'tap';
import { join } from 'node:path';
import { open } from 'lmdb';
import { tempDir } from './helpers/gateway.js';
import { createLogger } from '../core/logger.js';
import { openLogDb, type StoredLog } from '../plugins/logging/log-db.js';
import { openLogIndex } from '../plugins/logging/log-index.js';
import { createLogWriter } from '../plugins/logging/log-writer.js';
import type { Store } from '../core/index.js';

t.test('a batch is written a slice per turn, every record once', async (t) => {
  const root = open({ path: join(tempDir(), 'writer.mdb'), maxDbs: 16 });
  t.teardown(() => root.close());
  const db = openLogDb(root);
  const idx = openLogIndex({ root } as unknown as Store);
  let built = 0;
  const writer = createLogWriter<number>(db, idx, {
    queueMax: 10_000,
    flushMs: 60_000,
    log: createLogger({ level: 'error' }),
    finish: (n) => {
      built++;
      return { id: `rec-${String(n).padStart(5, '0')}`, trace_id: `t-${n}`, status: 200, workspace_id: null, model: null, provider: null, api_key_id: null } as unknown as StoredLog;
    },
  });
  t.teardown(() => writer.close());
  for (let i = 0; i < 500; i++) writer.push(i);
  const flushed = writer.flush();
  // Another task on the event loop (a request's next step) runs after the first slice.
  const seen = await new Promise<number>((resolve) => setImmediate(() => resolve(built)));
  t.ok(seen > 0 && seen < 100, `the event loop ran between slices (after ${seen} of 500 records)`);
  await flushed;
  t.equal(built, 500, 'every record built once');
  t.equal([...db.getKeys({})].length, 500, 'every record written');
  t.equal(db.get('rec-00499')?.trace_id, 't-499', 'the last one complete');
});
