/**
 * The default pipeline: a gateway process on the shipped `config/gateway.yaml`'s pipeline, exactly
 * as `npm start` runs it (every standard plugin, a log record for every request), against the bare
 * Node proxy in the same run. A new user's first numbers come from this configuration.
 *
 *   client ──► gateway (logging, analytics, metrics, otel, auth, virtual-keys, config-strategy,
 *              rate-limit, usage-limits, cache, admin-*) ──► mock          direct mode, admin key
 *
 * Targets (issue 13): ≥ 0.6× the bare proxy's throughput; at one connection at most 0.25 ms p50
 * and 1 ms p99 added over the direct call.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { startGatewayProcess } from '../lib/gateway-process.js';
import { addedLatency, endpointRounds, errorNotes, type LoadEndpoint } from '../lib/load-rounds.js';
import type { BenchContext, Scenario } from '../lib/scenario.js';
import type { Service } from '../lib/processes.js';
import type { BenchRequest } from '../lib/targets.js';
import { sendOnce } from '../lib/send-once.js';
import { median, round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import { runTempDir } from '../lib/temp-dir.js';

const MIN_RATIO_TO_BARE = 0.6;
const MAX_ADDED_P50_MS = 0.25;
const MAX_ADDED_P99_MS = 1;

const SHIPPED_CONFIG = fileURLToPath(new URL('../../../config/gateway.yaml', import.meta.url));

type Name = 'direct' | 'bare' | 'default';

/** The shipped pipeline, as YAML flow text (plugin options kept). */
function shippedPipeline(): string {
  const doc = parse(readFileSync(SHIPPED_CONFIG, 'utf8')) as { pipeline?: unknown };
  if (!Array.isArray(doc.pipeline) || doc.pipeline.length === 0) throw new Error(`no pipeline in ${SHIPPED_CONFIG}`);
  return JSON.stringify(doc.pipeline);
}

/**
 * A gateway process on the shipped pipeline, probed once: its process, the pipeline text and the
 * plain gateway's direct-mode request with the admin key `auth` asks for.
 */
export async function startDefaultPipeline(ctx: BenchContext, base: BenchRequest): Promise<{ gateway: Service; pipeline: string; request: BenchRequest }> {
  const adminKey = `gw-bench-${randomBytes(24).toString('hex')}`;
  const pipeline = shippedPipeline();
  const gateway = await startGatewayProcess({
    pinning: ctx.pinning,
    name: 'default-pipeline gateway',
    dir: runTempDir('default-pipeline'),
    pipeline,
    env: { GATEWAY_ADMIN_KEY: adminKey, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') },
  });
  const request = { ...base, headers: { ...base.headers, 'x-gateway-api-key': adminKey } };
  const probe = await sendOnce(gateway.url, request);
  if (probe.status !== 200) {
    await gateway.stop();
    throw new Error(`default-pipeline probe answered ${probe.status}: ${probe.text.slice(0, 300)}`);
  }
  return { gateway, pipeline, request };
}

export const defaultPipeline: Scenario = {
  name: 'default-pipeline',
  isolates: 'the shipped config/gateway.yaml pipeline (every standard plugin, logging every request) against the bare proxy',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    const [direct, bare, plain] = ctx.targets;
    const { gateway, pipeline, request } = await startDefaultPipeline(ctx, plain!.chatRequest());
    try {
      const c = ctx.options.connections;
      const endpoints: Array<LoadEndpoint<Name>> = [
        { name: 'direct', origin: direct!.origin, request: direct!.chatRequest() },
        { name: 'bare', origin: bare!.origin, request: bare!.chatRequest() },
        { name: 'default', origin: gateway.url, request },
      ];
      const loaded = await endpointRounds(ctx, tool, { label: `${this.name} c=${c}`, connections: c, endpoints });
      const single = await endpointRounds(ctx, tool, { label: `${this.name} c=1`, connections: 1, endpoints: endpoints.filter((e) => e.name !== 'bare') });
      const s = loaded.summary;
      const ratio = round(median(loaded.rounds.default.map((r, i) => r.rps / loaded.rounds.bare[i]!.rps)));
      const added = { p50: addedLatency(single.rounds, 'default', 'direct', 'p50'), p99: addedLatency(single.rounds, 'default', 'direct', 'p99') };
      const errors = s.default.errors + single.summary.default.errors;
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `Default pipeline (${tool.name} -c${c} and -c1, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median; ms; +pX = c=1 target − direct)`,
          columns: ['target', 'req/s', 'p50', 'p99', '÷ bare', 'c=1 p50', 'c=1 p99', '+p50', '+p99', 'errors'],
          rows: (['direct', 'bare', 'default'] as const).map((n) => {
            const one = n === 'bare' ? undefined : single.summary[n];
            return [
              n,
              fmt(s[n].rps, 0),
              fmt(s[n].p50, 3),
              fmt(s[n].p99, 3),
              fmt(s[n].rps / s.bare.rps),
              fmt(one?.p50, 3),
              fmt(one?.p99, 3),
              n === 'default' ? fmtDelta(added.p50) : '',
              n === 'default' ? fmtDelta(added.p99) : '',
              String(s[n].errors + (one?.errors ?? 0)),
            ];
          }),
        },
        notes: [...errorNotes(loaded.summary), ...errorNotes(single.summary).map((n) => `c=1 ${n}`), `pipeline (from config/gateway.yaml): ${pipeline}`],
        headlines: [
          ['default pipeline throughput ÷ bare', `${fmt(ratio)}× (${fmt(s.default.rps, 0)} req/s)`],
          ['default pipeline added p50 / p99 at c=1', `${fmtDelta(added.p50)} / ${fmtDelta(added.p99)} ms`],
        ],
        checks: [
          { name: 'default pipeline ÷ bare throughput', value: ratio, target: `≥ ${MIN_RATIO_TO_BARE}`, unit: '×', pass: ratio >= MIN_RATIO_TO_BARE && errors === 0 },
          { name: 'default pipeline added p50 at c=1', value: added.p50, target: `≤ ${MAX_ADDED_P50_MS} ms`, unit: 'ms', pass: added.p50 <= MAX_ADDED_P50_MS && errors === 0 },
          { name: 'default pipeline added p99 at c=1', value: added.p99, target: `≤ ${MAX_ADDED_P99_MS} ms`, unit: 'ms', pass: added.p99 <= MAX_ADDED_P99_MS && errors === 0 },
        ],
        data: { tool: tool.name, connections: c, pipeline, ratio, added, loaded, single },
      };
    } finally {
      await gateway.stop();
    }
  },
};
