/**
 * Cache hit: the governance gateway with an inline config that turns the simple cache on and one
 * fixed body, so after the first call every request is answered from the LMDB store and never
 * reaches the mock. What it isolates is the hit path (auth, virtual key, rate and usage limits,
 * cache key hashing and lookup, replaying the stored answer) against a direct call, which does
 * the same client work and pays the mock instead, and against the plain gateway, which proxies.
 */
import { addedLatency, endpointRounds, errorNotes, type LoadEndpoint } from '../lib/load-rounds.js';
import { governanceOf, targetNamed, type Scenario } from '../lib/scenario.js';
import { sendOnce } from '../lib/send-once.js';
import { round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import type { BenchRequest } from '../lib/targets.js';

type Name = 'direct' | 'gateway' | 'cache hit';

/** The entry is written after the first answer ends; a few tries cover that race. */
const HIT_TRIES = 5;
const HIT_RETRY_MS = 50;

/** Sends `request` until it is a HIT; throws if it never becomes one or an answer is not 200. */
async function expectHit(origin: string, request: BenchRequest): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < HIT_TRIES; i++) {
    const answer = await sendOnce(origin, request);
    if (answer.status !== 200) throw new Error(`cache probe answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    const status = answer.headers.get('x-gateway-cache-status') ?? 'no header';
    seen.push(status);
    if (status === 'HIT') return seen;
    await new Promise((resolve) => setTimeout(resolve, HIT_RETRY_MS));
  }
  throw new Error(`no cache HIT after ${HIT_TRIES} identical requests (x-gateway-cache-status: ${seen.join(', ')})`);
}

export const cacheHit: Scenario = {
  name: 'cache-hit',
  isolates: 'a simple-cache HIT served by the governance gateway (full pipeline, no upstream call), against a direct call and the plain gateway',
  needsGovernance: true,
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    const gov = governanceOf(ctx);
    const cached = gov.cachedChatRequest();
    const before = await expectHit(gov.origin, cached);

    const [direct, gateway] = [targetNamed(ctx, 'direct'), targetNamed(ctx, 'gateway')];
    const endpoints: Array<LoadEndpoint<Name>> = [
      { name: 'direct', origin: direct.origin, request: direct.chatRequest() },
      { name: 'gateway', origin: gateway.origin, request: gateway.chatRequest() },
      { name: 'cache hit', origin: gov.origin, request: cached },
    ];
    const c = ctx.options.connections;
    const loaded = await endpointRounds(ctx, tool, { label: `${this.name} c=${c}`, connections: c, endpoints });
    const single = await endpointRounds(ctx, tool, { label: `${this.name} c=1`, connections: 1, endpoints });
    // Still a hit after the load: the entry was not evicted or expired mid-run.
    const after = await expectHit(gov.origin, cached);

    const s = loaded.summary;
    const addedMs = {
      gateway: { p50: addedLatency(single.rounds, 'gateway', 'direct', 'p50'), p99: addedLatency(single.rounds, 'gateway', 'direct', 'p99') },
      hit: { p50: addedLatency(single.rounds, 'cache hit', 'direct', 'p50'), p99: addedLatency(single.rounds, 'cache hit', 'direct', 'p99') },
    };
    const ratios = { toDirect: round(s['cache hit'].rps / s.direct.rps), toGateway: round(s['cache hit'].rps / s.gateway.rps) };
    const rows = (['direct', 'gateway', 'cache hit'] as const).map((n) => {
      const plus = n === 'direct' ? undefined : addedMs[n === 'gateway' ? 'gateway' : 'hit'];
      const one = single.summary[n];
      return [n, fmt(s[n].rps, 0), fmt(s[n].p50, 3), fmt(s[n].p99, 3), fmt(s[n].rps / s.direct.rps), fmt(s[n].rps / s.gateway.rps), fmt(one.rps, 0), fmt(one.p50, 3), fmt(one.p99, 3), plus ? fmtDelta(plus.p50) : '', plus ? fmtDelta(plus.p99) : '', String(s[n].errors + one.errors)];
    });
    return {
      name: this.name,
      isolates: this.isolates,
      table: {
        title: `Cache hit (${tool.name} -t1 -c${c} and -c1, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median; ms; +pX = c=1 median over rounds of target − direct)`,
        columns: ['target', 'req/s', 'p50', 'p99', '÷ direct', '÷ gateway', 'c=1 req/s', 'c=1 p50', 'c=1 p99', '+p50', '+p99', 'errors'],
        rows,
      },
      notes: [
        ...errorNotes(loaded.summary),
        ...errorNotes(single.summary).map((n) => `c=1 ${n}`),
        `x-gateway-cache-status before the load: ${before.join(' → ')}; after: ${after.join(' → ')}`,
        'direct pays the mock (zero delay) on the load CPU; a hit pays the governance pipeline and an LMDB read on the proxy CPU',
      ],
      headlines: [
        ['cache hit throughput ÷ direct / ÷ gateway', `${fmt(ratios.toDirect)}× / ${fmt(ratios.toGateway)}× (${fmt(s['cache hit'].rps, 0)} req/s)`],
        ['cache hit added p50 / p99 at c=1 (vs direct)', `${fmtDelta(addedMs.hit.p50)} / ${fmtDelta(addedMs.hit.p99)} ms`],
      ],
      checks: [],
      data: { tool: tool.name, connections: c, cacheStatus: { before, after }, loaded, single, ratios, addedMs },
    };
  },
};
