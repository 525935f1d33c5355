/**
 * Soak: the default pipeline under steady load for `--soak-minutes` (default 10). Memory that grows
 * with the requests served (a cache without a bound, a listener per request, records kept after
 * they were written) shows as a slope here long before it shows in production. Opt-in: it runs
 * only when named (`--only soak`).
 *
 * A reading taken under load also counts garbage not yet collected: the main thread's heap swings
 * between about 45 and 95 MB with the collector's phase, and the process's own memory (RssAnon)
 * with it. So after each minute, with the load paused, every thread of the gateway runs a full
 * collection (bench/lib/gc-probe.cts, preloaded) and what is left is read: the JS heaps in use
 * (main thread and worker threads) with their resident pages, external memory and RssAnon, and
 * RssAnon less the heaps' resident pages (native memory: LMDB's, malloc's). Flat means that after
 * minute 1 (JIT, pools and caches filled), both the heaps in use and RssAnon grow by less than
 * MAX_GROWTH_PCT to the last minute: the heaps show a leak of JS objects, RssAnon one of native
 * memory too (LMDB's, undici's, buffers). The peak of RssAnon within each minute (sampled every
 * second) is reported beside them; the probe's collection each minute keeps the heaps from growing
 * as far as they do unprobed, so that peak is lower than a gateway left alone reaches. The file
 * pages LMDB maps in (RssFile) grow with the data written and are page cache, not the process's.
 */
import { join } from 'node:path';
import { gcProbeEnv, probeMemory, type ThreadHeap } from '../lib/gc-probe-read.js';
import { readRss } from '../lib/rss.js';
import type { Scenario } from '../lib/scenario.js';
import { round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import { runTempDir } from '../lib/temp-dir.js';
import { startDefaultPipeline } from './default-pipeline.js';

const MAX_GROWTH_PCT = 10;
const WINDOW_SEC = 60;
const SAMPLE_MS = 1000;
const MB = 1024 * 1024;

interface Sample {
  minute: number;
  rps: number;
  errors: number;
  /** RssAnon, MB: the highest of the minute's one-second samples. */
  peakAnonMb: number;
  /** After a full collection on every thread, MB. */
  heapUsedMb: number;
  /** The heaps' resident pages after the collection, and of their committed size the young generations'. */
  heapResidentMb: number;
  youngMb: number;
  externalMb: number;
  anonMb: number;
  fileMb: number;
}

/** The highest RssAnon of `pid` while `during` runs, sampled every SAMPLE_MS. */
async function peakAnon<T>(pid: number, during: Promise<T>): Promise<{ result: T; peakMb: number }> {
  let peakMb = readRss(pid).anonMb;
  const timer = setInterval(() => {
    const mb = readRss(pid).anonMb;
    if (mb > peakMb) peakMb = mb;
  }, SAMPLE_MS);
  try {
    const result = await during;
    return { result, peakMb: Math.max(peakMb, readRss(pid).anonMb) };
  } finally {
    clearInterval(timer);
  }
}

const growthPct = (first: number, last: number): number => round(((last - first) / first) * 100, 1);

export const soak: Scenario = {
  name: 'soak',
  isolates: 'resident memory of the default pipeline over a long steady load (flat after warm-up)',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    if (!ctx.options.only.includes(this.name)) return { name: this.name, isolates: this.isolates, skipped: 'opt-in: run with --only soak', notes: [], checks: [], data: null };
    const plain = ctx.targets.find((t) => t.name === 'gateway')!;
    const probeOut = join(runTempDir('soak'), 'gc-probe.json');
    const { gateway, request } = await startDefaultPipeline(ctx, plain.chatRequest(), gcProbeEnv(probeOut));
    try {
      const minutes = ctx.options.soakMinutes;
      const sample = async (minute: number, rps: number, errors: number, peakAnonMb: number): Promise<Sample> => {
        const probe = await probeMemory(gateway.pid, probeOut);
        const threads = [probe.main, ...probe.workers];
        const sum = (pick: (h: ThreadHeap) => number): number => threads.reduce((n, h) => n + pick(h), 0);
        const m = readRss(gateway.pid);
        return {
          minute,
          rps: round(rps, 0),
          errors,
          peakAnonMb: round(peakAnonMb, 1),
          heapUsedMb: round(sum((h) => h.usedBytes) / MB, 1),
          heapResidentMb: round(sum((h) => h.physicalBytes) / MB, 1),
          youngMb: round(sum((h) => h.youngBytes) / MB, 1),
          externalMb: round(probe.externalBytes / MB, 1),
          anonMb: round(probe.rssAnonKb / 1024, 1),
          fileMb: round(m.fileMb, 1),
        };
      };
      const idle = readRss(gateway.pid).anonMb;
      const samples: Sample[] = [await sample(0, 0, 0, idle)];
      for (let m = 1; m <= minutes; m++) {
        const { result: r, peakMb } = await peakAnon(gateway.pid, tool.run({ origin: gateway.url, request, connections: ctx.options.connections, durationSec: WINDOW_SEC }));
        const s = await sample(m, r.rps, r.errors, peakMb);
        samples.push(s);
        ctx.log(
          `soak: minute ${m}/${minutes}: ${fmt(s.rps, 0)} req/s; own memory peak ${fmt(s.peakAnonMb, 1)} MB; after a full GC: JS heaps ${fmt(s.heapUsedMb, 1)} MB in use, ${fmt(s.heapResidentMb, 1)} resident (young generations ${fmt(s.youngMb, 1)}), external ${fmt(s.externalMb, 1)}, own ${fmt(s.anonMb, 1)}; file pages ${fmt(s.fileMb, 1)}`,
        );
      }
      const first = samples[1]!;
      const last = samples.at(-1)!;
      const heapGrowth = growthPct(first.heapUsedMb, last.heapUsedMb);
      const anonGrowth = growthPct(first.anonMb, last.anonMb);
      // RssAnon holds the heaps' resident pages too: what is left is native memory (LMDB's, undici's, buffers, malloc's).
      const native = (s: Sample): number => round(s.anonMb - s.heapResidentMb, 1);
      const nativeGrowth = growthPct(native(first), native(last));
      const errors = samples.reduce((n, s) => n + s.errors, 0);
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `Soak: default pipeline, ${tool.name} -c${ctx.options.connections}, ${minutes} × ${WINDOW_SEC}s (MB; "after GC": each minute's load over, a full collection on every thread)`,
          columns: ['minute', 'req/s', 'own (RssAnon) peak', 'JS heaps in use after GC', 'JS heaps resident (young gen.)', 'external after GC', 'own after GC', 'own outside JS heaps', 'file pages (RssFile)', 'errors'],
          rows: samples.map((s) => [
            String(s.minute),
            s.minute === 0 ? 'idle' : fmt(s.rps, 0),
            fmt(s.peakAnonMb, 1),
            fmt(s.heapUsedMb, 1),
            `${fmt(s.heapResidentMb, 1)} (${fmt(s.youngMb, 1)})`,
            fmt(s.externalMb, 1),
            fmt(s.anonMb, 1),
            fmt(native(s), 1),
            fmt(s.fileMb, 1),
            String(s.errors),
          ]),
        },
        notes: [],
        headlines: [
          ['soak: JS heaps in use after GC, growth after minute 1', `${fmt(heapGrowth, 1)}% (${fmt(first.heapUsedMb, 1)} → ${fmt(last.heapUsedMb, 1)} MB over ${minutes - 1} min)`],
          ['soak: own memory (RssAnon) after GC, growth after minute 1', `${fmt(anonGrowth, 1)}% (${fmt(first.anonMb, 1)} → ${fmt(last.anonMb, 1)} MB; peak under load ${fmt(Math.max(...samples.map((s) => s.peakAnonMb)), 1)} MB)`],
          [
            'soak: of it, outside the JS heaps, growth after minute 1',
            `${fmt(nativeGrowth, 1)}% (${fmt(native(first), 1)} → ${fmt(native(last), 1)} MB; the heaps' resident pages ${fmt(first.heapResidentMb, 1)} → ${fmt(last.heapResidentMb, 1)} MB, young generations ${fmt(first.youngMb, 1)} → ${fmt(last.youngMb, 1)})`,
          ],
        ],
        checks: [
          { name: 'soak: JS heaps in use after GC, growth after minute 1', value: heapGrowth, target: `< ${MAX_GROWTH_PCT}%`, unit: '%', pass: heapGrowth < MAX_GROWTH_PCT && errors === 0 },
          // Native memory (LMDB's, undici's, buffers) is outside the JS heaps: a leak there shows only here.
          { name: 'soak: own memory (RssAnon) after GC, growth after minute 1', value: anonGrowth, target: `< ${MAX_GROWTH_PCT}%`, unit: '%', pass: anonGrowth < MAX_GROWTH_PCT && errors === 0 },
        ],
        data: { connections: ctx.options.connections, samples, heapGrowthPct: heapGrowth, anonGrowthPct: anonGrowth, nativeGrowthPct: nativeGrowth },
      };
    } finally {
      await gateway.stop();
    }
  },
};
