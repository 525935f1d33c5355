/**
 * Soak: the default pipeline under steady load for `--soak-minutes` (default 10), its resident
 * memory sampled after every minute. Memory that grows with the requests served (a cache without
 * a bound, a listener per request, records kept after they were written) shows as a slope here
 * long before it shows in production. Opt-in: it runs only when named (`--only soak`).
 *
 * Flat means: after the first minute (JIT, pools, caches filling), the process's own memory
 * (RssAnon: heap, buffers, native allocations) grows by less than MAX_GROWTH_PCT to the last
 * minute. The file pages LMDB maps in (RssFile) are reported beside it: they grow with the data
 * written (every request adds a log record) and are page cache the kernel takes back under
 * pressure, not memory the process holds.
 */
import { readRss } from '../lib/rss.js';
import type { Scenario } from '../lib/scenario.js';
import { round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import { startDefaultPipeline } from './default-pipeline.js';

const MAX_GROWTH_PCT = 10;

interface Sample {
  minute: number;
  rps: number;
  errors: number;
  rssMb: number;
  anonMb: number;
  fileMb: number;
}
const WINDOW_SEC = 60;

export const soak: Scenario = {
  name: 'soak',
  isolates: 'resident memory of the default pipeline over a long steady load (flat after warm-up)',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    if (!ctx.options.only.includes(this.name)) return { name: this.name, isolates: this.isolates, skipped: 'opt-in: run with --only soak', notes: [], checks: [], data: null };
    const plain = ctx.targets.find((t) => t.name === 'gateway')!;
    const { gateway, request } = await startDefaultPipeline(ctx, plain.chatRequest());
    try {
      const minutes = ctx.options.soakMinutes;
      const sample = (minute: number, rps: number, errors: number): Sample => {
        const m = readRss(gateway.pid);
        return { minute, rps: round(rps, 0), errors, rssMb: round(m.rssMb, 1), anonMb: round(m.anonMb, 1), fileMb: round(m.fileMb, 1) };
      };
      const samples: Sample[] = [sample(0, 0, 0)];
      for (let m = 1; m <= minutes; m++) {
        const r = await tool.run({ origin: gateway.url, request, connections: ctx.options.connections, durationSec: WINDOW_SEC });
        const s = sample(m, r.rps, r.errors);
        samples.push(s);
        ctx.log(`soak: minute ${m}/${minutes}: ${fmt(s.rps, 0)} req/s, RSS ${fmt(s.rssMb, 1)} MB (own ${fmt(s.anonMb, 1)}, file pages ${fmt(s.fileMb, 1)})`);
      }
      const first = samples[1]!.anonMb;
      const last = samples.at(-1)!.anonMb;
      const growth = round(((last - first) / first) * 100, 1);
      const errors = samples.reduce((n, s) => n + s.errors, 0);
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `Soak: default pipeline, ${tool.name} -c${ctx.options.connections}, ${minutes} × ${WINDOW_SEC}s (memory after each minute, MB)`,
          columns: ['minute', 'req/s', 'RSS', 'own (RssAnon)', 'file pages (RssFile)', 'errors'],
          rows: samples.map((s) => [String(s.minute), s.minute === 0 ? 'idle' : fmt(s.rps, 0), fmt(s.rssMb, 1), fmt(s.anonMb, 1), fmt(s.fileMb, 1), String(s.errors)]),
        },
        notes: [],
        headlines: [['soak: own memory growth after minute 1', `${fmt(growth, 1)}% (${fmt(first, 1)} → ${fmt(last, 1)} MB over ${minutes - 1} min)`]],
        checks: [{ name: 'soak: own memory (RssAnon) growth after minute 1', value: growth, target: `< ${MAX_GROWTH_PCT}%`, unit: '%', pass: growth < MAX_GROWTH_PCT && errors === 0 }],
        data: { connections: ctx.options.connections, samples, growthPct: growth },
      };
    } finally {
      await gateway.stop();
    }
  },
};
