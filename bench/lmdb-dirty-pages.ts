/**
 * What an LMDB write transaction leaves in the process's own memory once committed (the soak's
 * native growth, README "Soak"). LMDB copies each page a transaction changes into memory it
 * allocates, and after the commit keeps those copies for the next transactions to reuse, never
 * freeing them (`me_dpages` in lmdb-js's mdb.c): RssAnon stays at the largest transaction's mark.
 *
 *   node --expose-gc dist/bench/lmdb-dirty-pages.js
 *
 * Prints RssAnon after a full collection following each transaction: small ones, one of 20,000
 * and one of 60,000 random keys (each touching pages all over the tree), and small ones again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { runTempDir } from './lib/temp-dir.js';

const rssAnonMb = (): number => Number(/^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
const collect = (): void => (globalThis as { gc?: () => void }).gc?.();

const root = open({ path: join(runTempDir('lmdb-dirty-pages'), 'store.mdb'), maxDbs: 4 });
const db = root.openDB<Buffer, string>({ name: 'pages' });
const value = Buffer.alloc(300, 7);
let next = 0;
const key = (random: boolean): string => (random ? Math.random().toString(36).slice(2) : String(next++).padStart(12, '0'));

if ((globalThis as { gc?: unknown }).gc === undefined) console.log('(run with --expose-gc for readings after a collection)');
collect();
console.log(`start: RssAnon ${rssAnonMb().toFixed(1)} MB`);
const steps: Array<[number, boolean]> = [[1_000, false], [1_000, false], [20_000, true], [1_000, false], [1_000, true], [60_000, true], [1_000, true], [1_000, true]];
for (const [n, random] of steps) {
  await db.transaction(() => {
    for (let i = 0; i < n; i++) db.putSync(key(random), value);
  });
  collect();
  console.log(`a transaction of ${n} ${random ? 'random' : 'appended'} keys: RssAnon ${rssAnonMb().toFixed(1)} MB`);
}
await root.close();
