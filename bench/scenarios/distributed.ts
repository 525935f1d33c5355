/**
 * Distributed mode: the full governance pipeline on the embedded LMDB default and the same
 * pipeline on PostgreSQL + Valkey (both local, on the load CPU), in the same run:
 *
 *   client ──► governance gateway (LMDB)                                   ──► mock
 *   client ──► governance gateway (PostgreSQL control plane, Valkey counters) ──► mock
 *
 * Both gateways are provisioned alike (virtual key, a requests rate limit and a token budget that
 * apply to every call), so the difference is what the shared backends cost: the one Valkey script
 * per request that takes the counters and reserves the budget, and its settlement after the answer.
 * Also measured: one Valkey round trip (PING, then the cost of a sequential EVALSHA-sized call)
 * from this process, for the README's "what the round trip costs".
 *
 * Targets (issue 12): distributed ≥ 0.8× embedded throughput per gateway process, and at most
 * 0.2 ms more at p50 at one connection.
 */
import { Redis } from 'ioredis';
import { startGovernanceGateway, type GovernanceGateway } from '../lib/governance-gateway.js';
import { addedLatency, endpointRounds, errorNotes, type LoadEndpoint } from '../lib/load-rounds.js';
import { governanceOf, type Scenario } from '../lib/scenario.js';
import { sendOnce } from '../lib/send-once.js';
import { median, round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import { postgresBinDir, redisBinary, startPostgres, startRedis } from '../../test/helpers/services.js';

const MIN_THROUGHPUT_RATIO = 0.8;
const MAX_ADDED_P50_MS = 0.2;

type Name = 'direct' | 'embedded' | 'distributed';

/** Sequential round trips from this process: the floor under any per-request Valkey call. */
async function roundTripMicros(url: string, n = 2000): Promise<{ p50: number; p99: number }> {
  const client = new Redis(url);
  try {
    for (let i = 0; i < 200; i++) await client.ping();
    const samples: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await client.ping();
      samples.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    samples.sort((a, b) => a - b);
    return { p50: round(samples[Math.floor(n * 0.5)]!), p99: round(samples[Math.floor(n * 0.99)]!) };
  } finally {
    client.disconnect();
  }
}

export const distributed: Scenario = {
  name: 'distributed',
  isolates: 'the governance pipeline on PostgreSQL + Valkey (distributed mode) against the same pipeline on the embedded LMDB default',
  needsGovernance: true,
  async run(ctx) {
    const tool = ctx.tools.load;
    const skip = (why: string) => ({ name: this.name, isolates: this.isolates, skipped: why, notes: [], checks: [], data: null });
    if (tool === null) return skip('no HTTP/1.1 load tool');
    if (postgresBinDir() === null || redisBinary() === null) return skip('needs PostgreSQL and redis-server (apt-get install -y postgresql redis-server)');
    const embedded = governanceOf(ctx);

    // The servers inherit this process's pinning (the load CPU), away from the gateways.
    const teardown: Array<() => unknown> = [];
    const t = { teardown: (fn: () => unknown) => void teardown.push(fn) };
    let shared: GovernanceGateway | undefined;
    try {
      const [pg, redis] = await Promise.all([startPostgres(t), startRedis(t)]);
      const db = await pg.database('gateway_bench');
      ctx.log(`distributed: PostgreSQL on ${pg.port}, Valkey/Redis on ${redis.port}`);
      shared = await startGovernanceGateway({
        pinning: ctx.pinning,
        mockOrigin: ctx.targets[0]!.origin,
        name: 'distributed gateway',
        env: { GATEWAY_POSTGRES_URL: db, GATEWAY_REDIS_URL: redis.url },
        log: ctx.log,
      });
      const probe = await sendOnce(shared.origin, shared.chatRequest());
      if (probe.status !== 200) throw new Error(`distributed probe answered ${probe.status}: ${probe.text.slice(0, 300)}`);
      const rtt = await roundTripMicros(redis.url);

      const c = ctx.options.connections;
      const endpoints: Array<LoadEndpoint<Name>> = [
        { name: 'direct', origin: ctx.targets[0]!.origin, request: ctx.targets[0]!.chatRequest() },
        { name: 'embedded', origin: embedded.origin, request: embedded.chatRequest() },
        { name: 'distributed', origin: shared.origin, request: shared.chatRequest() },
      ];
      const loaded = await endpointRounds(ctx, tool, { label: `${this.name} c=${c}`, connections: c, endpoints });
      const single = await endpointRounds(ctx, tool, { label: `${this.name} c=1`, connections: 1, endpoints });
      const s = loaded.summary;
      const ratio = round(median(loaded.rounds.distributed.map((r, i) => r.rps / loaded.rounds.embedded[i]!.rps)));
      const added = {
        embedded: { p50: addedLatency(single.rounds, 'embedded', 'direct', 'p50'), p99: addedLatency(single.rounds, 'embedded', 'direct', 'p99') },
        distributed: { p50: addedLatency(single.rounds, 'distributed', 'direct', 'p50'), p99: addedLatency(single.rounds, 'distributed', 'direct', 'p99') },
      };
      const extraP50 = round(addedLatency(single.rounds, 'distributed', 'embedded', 'p50'));
      const rows = (['direct', 'embedded', 'distributed'] as const).map((n) => [
        n,
        fmt(s[n].rps, 0),
        fmt(s[n].p50, 3),
        fmt(s[n].p99, 3),
        n === 'direct' ? '' : fmt(s[n].rps / s.embedded.rps),
        fmt(single.summary[n].p50, 3),
        fmt(single.summary[n].p99, 3),
        n === 'direct' ? '' : fmtDelta(added[n].p50),
        n === 'direct' ? '' : fmtDelta(added[n].p99),
        String(s[n].errors + single.summary[n].errors),
      ]);
      const errors = s.distributed.errors + single.summary.distributed.errors;
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `Distributed mode (${tool.name} -c${c} and -c1, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median; ms; +pX = c=1 target − direct)`,
          columns: ['target', 'req/s', 'p50', 'p99', '÷ embedded', 'c=1 p50', 'c=1 p99', '+p50', '+p99', 'errors'],
          rows,
        },
        notes: [
          ...errorNotes(loaded.summary),
          ...errorNotes(single.summary).map((n) => `c=1 ${n}`),
          `one Valkey round trip (PING, sequential, loopback, from the bench process): p50 ${fmt(rtt.p50, 1)} µs, p99 ${fmt(rtt.p99, 1)} µs`,
          'both gateways: auth, virtual key, config, a requests rate limit and a token budget on every call; PostgreSQL and Valkey run on the load CPU',
        ],
        headlines: [
          ['distributed throughput ÷ embedded', `${fmt(ratio)}× (${fmt(s.distributed.rps, 0)} vs ${fmt(s.embedded.rps, 0)} req/s)`],
          ['distributed added p50 at c=1 over embedded', `${fmtDelta(extraP50)} ms (Valkey PING p50 ${fmt(rtt.p50, 1)} µs)`],
        ],
        checks: [
          { name: 'distributed ÷ embedded throughput', value: ratio, target: `≥ ${MIN_THROUGHPUT_RATIO}`, unit: '×', pass: ratio >= MIN_THROUGHPUT_RATIO && errors === 0 },
          { name: 'distributed added p50 at c=1 over embedded', value: extraP50, target: `≤ ${MAX_ADDED_P50_MS} ms`, unit: 'ms', pass: extraP50 <= MAX_ADDED_P50_MS && errors === 0 },
        ],
        data: { tool: tool.name, connections: c, ratio, extraP50, added, roundTripMicros: rtt, loaded, single },
      };
    } finally {
      await shared?.stop();
      for (const fn of teardown.reverse()) await fn();
    }
  },
};
