/**
 * Governance: the full pipeline on live traffic. The governance gateway authenticates the admin
 * key, resolves a virtual key (decrypting its provider key), plans the route, takes a rate-limit
 * counter (a requests policy that applies but never trips), charges a token budget after each
 * answer, and passes the cache (no cache config: the lookup is skipped). The same small chat
 * completion goes to direct, bare, the plain gateway and the governance gateway, interleaved:
 *
 *   governance ÷ gateway   what the governance plugins cost per request on the proxy core
 *   governance ÷ bare      DESIGN §4: "stays close to a bare Node proxy"
 *
 * then at c=1 (direct, gateway, governance) for the latency the pipeline adds to one request.
 * "Close" has no number in DESIGN §4, so this reports and does not pass or fail.
 */
import { addedLatency, endpointRounds, errorNotes, type LoadEndpoint, type Percentile } from '../lib/load-rounds.js';
import { governanceOf, type Scenario } from '../lib/scenario.js';
import { sendOnce } from '../lib/send-once.js';
import { round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';

type Name = 'direct' | 'bare' | 'gateway' | 'governance';

/** Usage charges are flushed in batches every 250 ms (usage-limits `flush_ms`): wait for the last one. */
const CHARGE_FLUSH_WAIT_MS = 600;

export const governance: Scenario = {
  name: 'governance',
  isolates: 'the full governance pipeline (auth, virtual key, config, rate limit, usage limit, cache off) per request, against the plain gateway and a bare proxy',
  needsGovernance: true,
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    const gov = governanceOf(ctx);

    // One call first: it must pass every plugin, and the rate limits policy must apply to it.
    const probe = await sendOnce(gov.origin, gov.chatRequest());
    if (probe.status !== 200) throw new Error(`governance probe answered ${probe.status}: ${probe.text.slice(0, 300)}`);
    if (probe.headers.get('x-ratelimit-limit-requests') === null) throw new Error('governance probe: no x-ratelimit-limit-requests header, so the rate limits policy did not apply');
    const cacheStatus = probe.headers.get('x-gateway-cache-status') ?? 'no header';
    const chargedBefore = await gov.usageCharged();

    const c = ctx.options.connections;
    const endpoints: Array<LoadEndpoint<Name>> = [
      ...ctx.targets.map((t) => ({ name: t.name, origin: t.origin, request: t.chatRequest() })),
      { name: 'governance', origin: gov.origin, request: gov.chatRequest() },
    ];
    const loaded = await endpointRounds(ctx, tool, { label: `${this.name} c=${c}`, connections: c, endpoints });
    // Bare is left out at c=1: latency-c1 measures it, and here the question is governance − gateway.
    const single = await endpointRounds(ctx, tool, { label: `${this.name} c=1`, connections: 1, endpoints: endpoints.filter((e) => e.name !== 'bare') });

    await new Promise((resolve) => setTimeout(resolve, CHARGE_FLUSH_WAIT_MS));
    const charged = (await gov.usageCharged()) - chargedBefore;

    const s = loaded.summary;
    const added = (name: 'gateway' | 'governance', pct: Percentile): number => addedLatency(single.rounds, name, 'direct', pct);
    const addedMs = {
      gateway: { p50: added('gateway', 'p50'), p99: added('gateway', 'p99') },
      governance: { p50: added('governance', 'p50'), p99: added('governance', 'p99') },
    };
    const pipeline = { p50: round(addedMs.governance.p50 - addedMs.gateway.p50), p99: round(addedMs.governance.p99 - addedMs.gateway.p99) };
    const ratios = { toGateway: round(s.governance.rps / s.gateway.rps), toBare: round(s.governance.rps / s.bare.rps), toDirect: round(s.governance.rps / s.direct.rps) };

    const rows = (['direct', 'bare', 'gateway', 'governance'] as const).map((n) => {
      const one = n === 'bare' ? undefined : single.summary[n];
      const plus = n === 'gateway' || n === 'governance' ? addedMs[n] : undefined;
      const errors = s[n].errors + (one?.errors ?? 0);
      return [n, fmt(s[n].rps, 0), fmt(s[n].p50, 3), fmt(s[n].p99, 3), fmt(s[n].rps / s.gateway.rps), fmt(s[n].rps / s.bare.rps), fmt(one?.p50, 3), fmt(one?.p99, 3), plus ? fmtDelta(plus.p50) : '', plus ? fmtDelta(plus.p99) : '', String(errors)];
    });
    rows.push(['governance − gateway', '', '', '', '', '', '', '', fmtDelta(pipeline.p50), fmtDelta(pipeline.p99), '']);

    const notes = [
      ...errorNotes(loaded.summary),
      ...errorNotes(single.summary).map((n) => `c=1 ${n}`),
      `governance answers carry x-gateway-cache-status: ${cacheStatus} (no cache config) and x-ratelimit-* of the requests policy`,
      `usage limits policy charged ${fmt(charged, 0)} tokens during the scenario (warm-ups included): the budget applies to every answer`,
      'target (DESIGN §4): the full pipeline "stays close to a bare Node proxy"; no number is given, so no pass/fail',
    ];
    return {
      name: this.name,
      isolates: this.isolates,
      table: {
        title: `Governance pipeline (${tool.name} -t1 -c${c} and -c1, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median; ms; +pX = c=1 median over rounds of target − direct)`,
        columns: ['target', 'req/s', 'p50', 'p99', '÷ gateway', '÷ bare', 'c=1 p50', 'c=1 p99', '+p50', '+p99', 'errors'],
        rows,
      },
      notes,
      headlines: [
        ['governance throughput ÷ gateway / ÷ bare', `${fmt(ratios.toGateway)}× / ${fmt(ratios.toBare)}× (${fmt(s.governance.rps, 0)} req/s)`],
        ['governance added p50 / p99 at c=1 (vs direct)', `${fmtDelta(addedMs.governance.p50)} / ${fmtDelta(addedMs.governance.p99)} ms (pipeline over plain gateway ${fmtDelta(pipeline.p50)} / ${fmtDelta(pipeline.p99)})`],
      ],
      checks: [],
      data: { tool: tool.name, connections: c, cacheStatus, usageChargedTokens: charged, loaded, single, ratios, addedMs: { ...addedMs, pipelineOverGateway: pipeline } },
    };
  },
};
