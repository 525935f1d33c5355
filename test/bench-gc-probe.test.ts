/**
 * The soak's memory probe (bench/lib/gc-probe.cts, read by bench/lib/gc-probe-read.ts): a reading
 * counts what the process's threads hold after a full collection, not the garbage they have not
 * collected yet, and it reaches a worker started without inherited flags, as the log thread is.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t from 'tap';
import { gcProbeEnv, probeMemory, type ProbeReading } from '../bench/lib/gc-probe-read.js';
import type { ThreadHeap } from '../bench/lib/gc-probe.cjs';

const MB = 1024 * 1024;

/**
 * A process whose main thread holds `keep` (about 24 MB of live objects) and leaves about 60 MB of
 * garbage behind, and whose worker (execArgv: [] like the log thread) holds about 15 MB. It answers
 * "ready <worker's threadId>" on stdout, and drops `keep` when it reads "drop" on stdin (answering "dropped").
 */
const CHILD = `
import { Worker } from 'node:worker_threads';
import { createInterface } from 'node:readline';
const objects = (n) => Array.from({ length: n }, (_, i) => ({ i, s: 'x'.repeat(16) + i }));
globalThis.keep = objects(300_000);
for (let k = 0; k < 8; k++) objects(100_000);
const worker = new Worker("globalThis.held = Array.from({ length: 100_000 }, (_, i) => ({ i, s: 'y'.repeat(16) + i })); setInterval(() => {}, 1000);", { eval: true, execArgv: [] });
worker.on('online', () => setTimeout(() => console.log('ready ' + worker.threadId), 300));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'drop') { globalThis.keep = undefined; console.log('dropped'); }
});
`;

/** Resolves with the first line the child writes that starts with `prefix` (its stdout stays open between waits). */
function lines(child: ChildProcess): (prefix: string) => Promise<string> {
  const seen: string[] = [];
  const waiting = new Map<string, (line: string) => void>();
  createInterface({ input: child.stdout! }).on('line', (l) => {
    seen.push(l);
    for (const [prefix, resolve] of waiting) if (l.startsWith(prefix)) resolve(l);
  });
  return (prefix) => {
    const earlier = seen.find((l) => l.startsWith(prefix));
    return earlier !== undefined ? Promise.resolve(earlier) : new Promise((resolve) => waiting.set(prefix, resolve));
  };
}

t.test('a reading is the memory left after every thread collected, the worker included', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gc-probe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'child.mjs');
  writeFileSync(script, CHILD);
  const out = join(dir, 'probe.json');
  // The test runner's own NODE_OPTIONS (its loaders run a hooks thread of their own) are left out.
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...gcProbeEnv(out, '') }, stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGTERM'));
  const line = lines(child);
  const workerId = Number((await line('ready ')).slice('ready '.length));
  const ours = (r: ProbeReading): ThreadHeap | undefined => r.workers.find((w) => w.threadId === workerId);

  const first = await probeMemory(child.pid!, out);
  t.equal(first.seq, 1);
  t.ok(first.main.usedBytes > 15 * MB, `the main thread's live objects are counted (${(first.main.usedBytes / MB).toFixed(1)} MB)`);
  t.ok(first.main.usedBytes < 60 * MB, `its garbage is not (${(first.main.usedBytes / MB).toFixed(1)} MB in use of ${(first.main.totalBytes / MB).toFixed(1)} committed)`);
  t.ok(first.main.usedBytes <= first.main.totalBytes);
  // V8 counts a large object's page rounding as resident, so physical can pass committed by a few KB.
  t.ok(first.main.physicalBytes > first.main.usedBytes / 2 && first.main.physicalBytes <= first.main.totalBytes + MB, `the heap's resident pages are about what it committed (${(first.main.physicalBytes / MB).toFixed(1)} of ${(first.main.totalBytes / MB).toFixed(1)} MB)`);
  t.ok(first.main.youngBytes > 0 && first.main.youngBytes < first.main.totalBytes, `the young generation is part of it (${(first.main.youngBytes / MB).toFixed(1)} MB)`);
  t.ok(first.rssAnonKb * 1024 > first.main.physicalBytes, 'RssAnon holds the resident heap');
  const worker = ours(first);
  t.ok(worker, `the worker started with execArgv: [] answered (${JSON.stringify(first.workers)})`);
  t.ok(worker!.usedBytes > 8 * MB, `the worker's live objects are counted (${(worker!.usedBytes / MB).toFixed(1)} MB)`);
  t.ok(worker!.physicalBytes > 8 * MB && worker!.youngBytes > 0, "the worker's resident heap and young generation are read on the worker");
  t.ok(first.rssAnonKb > 0 && first.externalBytes >= 0);

  child.stdin!.write('drop\n');
  await line('dropped');
  const second = await probeMemory(child.pid!, out);
  t.equal(second.seq, 2, 'each signal gives a new reading');
  t.ok(first.main.usedBytes - second.main.usedBytes > 10 * MB, `what was dropped is gone from the reading (${(first.main.usedBytes / MB).toFixed(1)} → ${(second.main.usedBytes / MB).toFixed(1)} MB)`);
  t.ok(ours(second)!.usedBytes > 8 * MB, 'what the worker still holds stays');
});

t.test('a process started without the probe gives a clear error, not a wait without end', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gc-probe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const child = spawn(process.execPath, ['-e', "process.on('SIGUSR2', () => {}); console.log('ready'); setInterval(() => {}, 1000)"], { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGTERM'));
  await lines(child)('ready');
  await t.rejects(probeMemory(child.pid!, join(dir, 'probe.json'), 300), /no memory reading from process \d+ within 300 ms \(was it started with the gc probe\?\)/);
  child.kill('SIGTERM');
  await once(child, 'exit');
});
