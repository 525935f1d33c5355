/**
 * How long a start takes, from spawning the process to its "listening" line: the gateway on the
 * shipped `config/gateway.yaml` pipeline on a new store (a first `npm start`) and again on the
 * store it left (a restart), against the bench's bare proxy (node:http + undici, nothing else)
 * started the same way: what starting Node and those two libraries costs on this machine. The
 * three alternate, `ROUNDS` times each, so drift hits them alike. No target: it is reported so
 * that a change which slows every start shows in the table.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startGatewayProcess } from '../lib/gateway-process.js';
import { startBareProxyProcess } from '../lib/services.js';
import type { Scenario } from '../lib/scenario.js';
import { median, round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import { runTempDir } from '../lib/temp-dir.js';
import { shippedPipeline } from './default-pipeline.js';

const ROUNDS = 5;

async function timed(start: () => Promise<{ stop(): Promise<void> }>): Promise<number> {
  const t0 = performance.now();
  const service = await start();
  const ms = performance.now() - t0;
  await service.stop();
  return ms;
}

export const startup: Scenario = {
  name: 'startup',
  isolates: 'process spawn to listening: the shipped pipeline on a new store and on its own store again, against the bare proxy',
  async run(ctx) {
    const pipeline = shippedPipeline();
    const env = { GATEWAY_ADMIN_KEY: `gw-bench-${randomBytes(24).toString('hex')}`, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
    const upstream = ctx.targets[0]!.origin;
    const samples = { bare: [] as number[], fresh: [] as number[], again: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      samples.bare.push(await timed(() => startBareProxyProcess(ctx.pinning, upstream, 'startup bare proxy')));
      const dir = runTempDir(join('startup', String(r)));
      const gateway = () => startGatewayProcess({ pinning: ctx.pinning, name: 'startup gateway', dir, pipeline, env });
      samples.fresh.push(await timed(gateway));
      samples.again.push(await timed(gateway));
      ctx.log(`startup round ${r + 1}/${ROUNDS}: bare ${fmt(samples.bare[r]!, 0)} ms, new store ${fmt(samples.fresh[r]!, 0)} ms, its store again ${fmt(samples.again[r]!, 0)} ms`);
    }
    const med = { bare: median(samples.bare), fresh: median(samples.fresh), again: median(samples.again) };
    const range = (s: number[]): string => `${fmt(Math.min(...s), 0)}–${fmt(Math.max(...s), 0)}`;
    return {
      name: this.name,
      isolates: this.isolates,
      table: {
        title: `startup, spawn to listening, median of ${ROUNDS} alternating starts`,
        columns: ['process', 'median ms', 'range ms'],
        rows: [
          ['bare proxy', fmt(med.bare, 0), range(samples.bare)],
          ['gateway, shipped pipeline, new store', fmt(med.fresh, 0), range(samples.fresh)],
          ['gateway, shipped pipeline, its store again', fmt(med.again, 0), range(samples.again)],
        ],
      },
      notes: [],
      checks: [],
      headlines: [['startup, shipped pipeline (bare proxy)', `${fmt(med.fresh, 0)} ms new store, ${fmt(med.again, 0)} ms restart (${fmt(med.bare, 0)} ms)`]],
      data: { rounds: ROUNDS, medianMs: { bare: round(med.bare, 1), fresh: round(med.fresh, 1), again: round(med.again, 1) }, samplesMs: samples },
    };
  },
};
