/**
 * The default pipeline: a gateway process on the shipped `config/gateway.yaml`'s pipeline, exactly
 * as `npm start` runs it (every standard plugin, a log record for every request), against the bare
 * Node proxy in the same run. A new user's first numbers come from this configuration.
 *
 *   client ──► gateway (logging, analytics, metrics, otel, auth, virtual-keys, config-strategy,
 *              rate-limit, usage-limits, cache, admin-*) ──► mock          direct mode, admin key
 *
 * Targets (issue 13): ≥ 0.6× the bare proxy's throughput; at one connection at most 0.25 ms p50
 * and 1 ms p99 added over the direct call; at most 1 ms added to the first streamed event.
 * The bare proxy is measured at one connection and in the streams too: what any Node hop adds
 * on this machine, the floor under the latency targets.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { startGatewayProcess } from '../lib/gateway-process.js';
import { addedLatency, endpointRounds, errorNotes, type LoadEndpoint } from '../lib/load-rounds.js';
import type { LoadTool } from '../lib/load-tool.js';
import { cpuMs } from '../lib/proc-cpu.js';
import type { BenchContext, Scenario } from '../lib/scenario.js';
import type { Service } from '../lib/processes.js';
import { CHAT_STREAM_BODY_JSON, type BenchRequest, type Target } from '../lib/targets.js';
import { sendOnce } from '../lib/send-once.js';
import { median, round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import { createStreamClient, warmStreams, WARM_DIRECTIVES } from '../lib/sse-timing.js';
import { runTempDir } from '../lib/temp-dir.js';

const MIN_RATIO_TO_BARE = 0.6;
const MAX_ADDED_P50_MS = 0.25;
const MAX_ADDED_P99_MS = 1;
const MAX_ADDED_TTFB_MS = 1;
/** The streaming scenario's stream: 20 chunks, 5 ms apart. */
const STREAM_DIRECTIVES = 'chunks=20;chunk_delay=5';
const STREAM_TIMEOUT_MS = 10_000;

/**
 * Median time to the first SSE event over `n` sequential streams, after unmeasured ones: the
 * stream path warmed as in service (`warm`, see warmStreams), then a few at the timed pace.
 * The targets alternate stream by stream, so drift on the machine hits all alike.
 */
async function streamTtfb(targets: Array<{ origin: string; request: BenchRequest; warm: BenchRequest }>, n: number): Promise<number[]> {
  const client = createStreamClient();
  try {
    for (const t of targets) await warmStreams(client, t.origin, t.warm);
    for (const t of targets) for (let i = 0; i < 3; i++) await client.stream(t.origin, t.request, STREAM_TIMEOUT_MS);
    const samples: number[][] = targets.map(() => []);
    for (let i = 0; i < n; i++) {
      for (const [k, t] of targets.entries()) samples[k]!.push((await client.stream(t.origin, t.request, STREAM_TIMEOUT_MS)).ttfbMs);
    }
    return samples.map((s) => round(median(s)));
  } finally {
    await client.close();
  }
}

/** One round of {@link cpuAtOnce}: each process's CPU per request over the same seconds. */
export interface AtOnceRound {
  bareUs: number;
  defaultUs: number;
  /** bareUs ÷ defaultUs: the throughput ratio the two would have alone on a core they had to themselves. */
  ratio: number;
  errors: number;
}

/**
 * The bare proxy and the default pipeline loaded at once, each by its own load generator with half
 * the connections, and each one's CPU per request (all its threads, from /proc) over the same
 * seconds, per round after a warm-up at once. With both on the proxy CPU, what the VM's drift does
 * to one it does to the other, so the ratio holds to a few percent where the throughput rounds'
 * ratio moves by a fifth between runs (bench/ab.sh measures two builds the same way).
 */
async function cpuAtOnce(ctx: BenchContext, tool: LoadTool, what: string, sides: { bare: LoadEndpoint<Name> & { pid: number }; gateway: LoadEndpoint<Name> & { pid: number } }): Promise<AtOnceRound[]> {
  const connections = Math.max(1, Math.floor(ctx.options.connections / 2));
  const both = (durationSec: number) =>
    Promise.all([sides.bare, sides.gateway].map((e) => tool.run({ origin: e.origin, request: e.request, connections, durationSec })));
  const rounds: AtOnceRound[] = [];
  for (let r = 1; r <= ctx.options.rounds; r++) {
    ctx.log(`default-pipeline at once (${what}): round ${r}/${ctx.options.rounds}, bare and default, -c${connections} each`);
    if (ctx.options.warmup > 0) await both(ctx.options.warmup);
    const before = [cpuMs(sides.bare.pid), cpuMs(sides.gateway.pid)];
    const [bare, gateway] = await both(ctx.options.duration);
    const bareUs = ((cpuMs(sides.bare.pid) - before[0]!) * 1000) / bare!.requests;
    const defaultUs = ((cpuMs(sides.gateway.pid) - before[1]!) * 1000) / gateway!.requests;
    rounds.push({ bareUs: round(bareUs, 1), defaultUs: round(defaultUs, 1), ratio: round(bareUs / defaultUs), errors: bare!.errors + gateway!.errors });
  }
  return rounds;
}

/** Each round's CPU per request and ratio, for a note. */
function byRound(rounds: AtOnceRound[]): string {
  return `${rounds.map((r) => `${fmt(r.bareUs, 1)} / ${fmt(r.defaultUs, 1)} µs = ${fmt(r.ratio)}×`).join(', ')}${rounds.some((r) => r.errors > 0) ? ' (errors: suspect)' : ''}`;
}

const SHIPPED_CONFIG = fileURLToPath(new URL('../../../config/gateway.yaml', import.meta.url));

type Name = 'direct' | 'bare' | 'default';

/** The shipped pipeline, as YAML flow text (plugin options kept). */
export function shippedPipeline(): string {
  const doc = parse(readFileSync(SHIPPED_CONFIG, 'utf8')) as { pipeline?: unknown };
  if (!Array.isArray(doc.pipeline) || doc.pipeline.length === 0) throw new Error(`no pipeline in ${SHIPPED_CONFIG}`);
  return JSON.stringify(doc.pipeline);
}

/**
 * A gateway process on the shipped pipeline, probed once: its process, the pipeline text and the
 * plain gateway's direct-mode request with the admin key `auth` asks for. `env` is added to the
 * process's environment.
 */
export async function startDefaultPipeline(ctx: BenchContext, base: BenchRequest, env: Record<string, string> = {}): Promise<{ gateway: Service; pipeline: string; request: BenchRequest }> {
  const adminKey = `gw-bench-${randomBytes(24).toString('hex')}`;
  const pipeline = shippedPipeline();
  // With --profile, this gateway is profiled too; its profile is kept beside the results when it stops.
  const profileDir = ctx.options.profile ? mkdtempSync(join(runTempDir('profile-default-pipeline'), 'run-')) : undefined;
  const started = await startGatewayProcess({
    pinning: ctx.pinning,
    name: 'default-pipeline gateway',
    dir: runTempDir('default-pipeline'),
    pipeline,
    env: { ...env, GATEWAY_ADMIN_KEY: adminKey, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') },
    ...(profileDir === undefined ? {} : { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] }),
  });
  const gateway: Service = profileDir === undefined ? started : {
    name: started.name,
    pid: started.pid,
    url: started.url,
    stderrTail: () => started.stderrTail(),
    async stop(graceMs) {
      await started.stop(graceMs);
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file === undefined) return ctx.log('default-pipeline gateway: no .cpuprofile written (it did not exit cleanly)');
      mkdirSync(dirname(ctx.options.out), { recursive: true });
      const kept = join(dirname(ctx.options.out), `default-pipeline-${started.pid}.cpuprofile`);
      copyFileSync(join(profileDir, file), kept);
      ctx.log(`default-pipeline gateway CPU profile saved to ${kept}`);
    },
  };
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
      const single = await endpointRounds(ctx, tool, { label: `${this.name} c=1`, connections: 1, endpoints });
      const atOnce = await cpuAtOnce(ctx, tool, 'plain', { bare: { ...endpoints[1]!, pid: bare!.pid }, gateway: { ...endpoints[2]!, pid: gateway.pid } });
      const atOnceRatio = round(median(atOnce.map((r) => r.ratio)));
      // The same chat completion streamed (the mock's default stream: 9 events, back to back), which
      // most traffic is and the rounds above do not send: reported, no target of its own.
      const streamed = (e: LoadEndpoint<Name>): LoadEndpoint<Name> => ({ ...e, request: { ...e.request, body: CHAT_STREAM_BODY_JSON } });
      const atOnceStreams = await cpuAtOnce(ctx, tool, 'streams', { bare: { ...streamed(endpoints[1]!), pid: bare!.pid }, gateway: { ...streamed(endpoints[2]!), pid: gateway.pid } });
      const atOnceStreamsRatio = round(median(atOnceStreams.map((r) => r.ratio)));
      // The same stream as the streaming scenario's, with the admin key `auth` asks for.
      const streams = (t: Target, headers: Record<string, string> = {}): { request: BenchRequest; warm: BenchRequest } => {
        const at = (directives: string): BenchRequest => {
          const r = t.chatRequest({ stream: true, directives });
          return { ...r, headers: { ...r.headers, ...headers } };
        };
        return { request: at(STREAM_DIRECTIVES), warm: at(WARM_DIRECTIVES) };
      };
      const [directTtfb, bareTtfb, defaultTtfb] = await streamTtfb(
        [
          { origin: direct!.origin, ...streams(direct!) },
          { origin: bare!.origin, ...streams(bare!) },
          { origin: gateway.url, ...streams(plain!, { 'x-gateway-api-key': request.headers['x-gateway-api-key']! }) },
        ],
        ctx.options.streams,
      );
      const addedTtfb = round(defaultTtfb! - directTtfb!);
      const bareAddedTtfb = round(bareTtfb! - directTtfb!);
      const s = loaded.summary;
      const ratio = round(median(loaded.rounds.default.map((r, i) => r.rps / loaded.rounds.bare[i]!.rps)));
      const added = { p50: addedLatency(single.rounds, 'default', 'direct', 'p50'), p99: addedLatency(single.rounds, 'default', 'direct', 'p99') };
      const bareAdded = { p50: addedLatency(single.rounds, 'bare', 'direct', 'p50'), p99: addedLatency(single.rounds, 'bare', 'direct', 'p99') };
      const errors = s.default.errors + single.summary.default.errors;
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `Default pipeline (${tool.name} -c${c} and -c1, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median; ms; +pX = c=1 target − direct)`,
          columns: ['target', 'req/s', 'p50', 'p99', '÷ bare', 'c=1 p50', 'c=1 p99', '+p50', '+p99', 'errors'],
          rows: (['direct', 'bare', 'default'] as const).map((n) => {
            const one = single.summary[n];
            const plus = n === 'default' ? added : n === 'bare' ? bareAdded : undefined;
            return [
              n,
              fmt(s[n].rps, 0),
              fmt(s[n].p50, 3),
              fmt(s[n].p99, 3),
              fmt(s[n].rps / s.bare.rps),
              fmt(one.p50, 3),
              fmt(one.p99, 3),
              plus === undefined ? '' : fmtDelta(plus.p50),
              plus === undefined ? '' : fmtDelta(plus.p99),
              String(s[n].errors + one.errors),
            ];
          }),
        },
        notes: [
          ...errorNotes(loaded.summary),
          ...errorNotes(single.summary).map((n) => `c=1 ${n}`),
          `time to the first streamed event (median of ${ctx.options.streams} alternating streams): direct ${fmt(directTtfb, 3)} ms, bare proxy ${fmt(bareTtfb, 3)} ms (${fmtDelta(bareAddedTtfb)}), default pipeline ${fmt(defaultTtfb, 3)} ms (${fmtDelta(addedTtfb)})`,
          `both loaded at once (-c${Math.max(1, Math.floor(c / 2))} each, on the proxy CPU), CPU per request, bare ÷ default by round: ${byRound(atOnce)}`,
          `the same, streamed (9 events a stream): ${byRound(atOnceStreams)}`,
          `pipeline (from config/gateway.yaml): ${pipeline}`,
        ],
        headlines: [
          ['default pipeline throughput ÷ bare', `${fmt(ratio)}× (${fmt(s.default.rps, 0)} req/s)`],
          ['default pipeline CPU per request, bare ÷ default, both loaded at once', `${fmt(atOnceRatio)}× (median of ${atOnce.length} rounds: ${atOnce.map((r) => fmt(r.ratio)).join(', ')})`],
          ['default pipeline CPU per streamed request, bare ÷ default, both loaded at once', `${fmt(atOnceStreamsRatio)}× (median of ${atOnceStreams.length} rounds: ${atOnceStreams.map((r) => fmt(r.ratio)).join(', ')})`],
          ['default pipeline added p50 / p99 at c=1 (bare proxy)', `${fmtDelta(added.p50)} / ${fmtDelta(added.p99)} ms (${fmtDelta(bareAdded.p50)} / ${fmtDelta(bareAdded.p99)})`],
          ['default pipeline streaming: added time to first event (bare proxy)', `${fmtDelta(addedTtfb)} ms (${fmtDelta(bareAddedTtfb)}), median of ${ctx.options.streams}`],
        ],
        checks: [
          { name: 'default pipeline ÷ bare throughput', value: ratio, target: `≥ ${MIN_RATIO_TO_BARE}`, unit: '×', pass: ratio >= MIN_RATIO_TO_BARE && errors === 0 },
          { name: 'default pipeline added p50 at c=1', value: added.p50, target: `≤ ${MAX_ADDED_P50_MS} ms`, unit: 'ms', pass: added.p50 <= MAX_ADDED_P50_MS && errors === 0 },
          { name: 'default pipeline added p99 at c=1', value: added.p99, target: `≤ ${MAX_ADDED_P99_MS} ms`, unit: 'ms', pass: added.p99 <= MAX_ADDED_P99_MS && errors === 0 },
          { name: 'default pipeline streaming added time to first event', value: addedTtfb, target: `≤ ${MAX_ADDED_TTFB_MS} ms`, unit: 'ms', pass: addedTtfb <= MAX_ADDED_TTFB_MS },
        ],
        data: { tool: tool.name, connections: c, pipeline, ratio, atOnce: { ratio: atOnceRatio, rounds: atOnce }, atOnceStreams: { ratio: atOnceStreamsRatio, rounds: atOnceStreams }, added, bareAdded, loaded, single, streaming: { directTtfbMs: directTtfb, bareTtfbMs: bareTtfb, defaultTtfbMs: defaultTtfb, addedTtfbMs: addedTtfb, bareAddedTtfbMs: bareAddedTtfb, streams: ctx.options.streams } },
      };
    } finally {
      await gateway.stop();
    }
  },
};
