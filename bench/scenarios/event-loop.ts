/**
 * Event-loop delay while large prompts are counted (DESIGN §4: token counting runs in the worker
 * pool, so the loop stays responsive). For this scenario the governance gateway's only rate limit
 * is a *tokens* policy (never trips), so every request's prompt is counted to reserve tokens.
 * N unique ~100 KB prompts go through at a fixed concurrency while `GET /health` is probed every
 * 5 ms from outside: a blocked loop delays /health by as long as it is blocked.
 *
 *   idle        /health of the plain and governance gateways, no load: the baseline
 *   direct      the same prompts to the mock: the floor for request throughput
 *   gateway     the plain gateway under the same prompts: parsing 100 KB bodies, no counting
 *   governance  the full pipeline, every prompt counted for the tokens limit
 *
 * No pass/fail: DESIGN §4 says "stays low" without a number.
 */
import { idleHealth, probeHealth, type ProbeSamples } from '../lib/health-probe.js';
import { sendPrompts, uniquePromptBodies, type PromptRun } from '../lib/prompt-load.js';
import { governanceOf, targetNamed, type Scenario } from '../lib/scenario.js';
import { median, percentile, round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import type { BenchRequest } from '../lib/targets.js';

const REQUESTS = 200;
const CONCURRENCY = 8;
const PROMPT_CHARS = 100 * 1024;
const PROBE_EVERY_MS = 5;
const IDLE_MS = 2000;
/** One prompt per connection before measuring: opens the sockets and starts the token pool (lazy). */
const WARMUP_REQUESTS = CONCURRENCY;
/** The tokens policy's header: every governance answer must carry it, or nothing was counted. */
const TOKENS_HEADER = 'x-ratelimit-limit-tokens';

type Name = 'direct' | 'gateway' | 'governance';

interface HealthStats {
  probes: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  selfP99: number;
}

interface LoadStats {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non200: number;
  withTokensHeader: number;
}

function healthStats(s: ProbeSamples): HealthStats {
  return {
    probes: s.latenciesMs.length,
    failed: s.failed,
    p50: round(median(s.latenciesMs)),
    p99: round(percentile(s.latenciesMs, 99)),
    max: round(Math.max(...s.latenciesMs)),
    selfP99: round(s.self.p99),
  };
}

function loadStats(run: PromptRun): LoadStats {
  const ok = run.statuses['200'] ?? 0;
  return {
    requests: run.latenciesMs.length,
    rps: round(run.latenciesMs.length / (run.durationMs / 1000), 1),
    p50: round(median(run.latenciesMs)),
    p99: round(percentile(run.latenciesMs, 99)),
    non200: REQUESTS - ok,
    withTokensHeader: run.withHeader,
  };
}

export const eventLoop: Scenario = {
  name: 'event-loop',
  isolates: 'event-loop delay of the governance gateway (external /health probe) while unique 100 KB prompts are token-counted, against idle and the plain gateway',
  needsGovernance: true,
  async run(ctx) {
    const gov = governanceOf(ctx);
    const endpoints: Array<{ name: Name; origin: string; request: BenchRequest; probe: boolean }> = [
      { name: 'direct', origin: targetNamed(ctx, 'direct').origin, request: targetNamed(ctx, 'direct').chatRequest(), probe: false },
      { name: 'gateway', origin: targetNamed(ctx, 'gateway').origin, request: targetNamed(ctx, 'gateway').chatRequest(), probe: true },
      { name: 'governance', origin: gov.origin, request: gov.chatRequest(), probe: true },
    ];
    ctx.log(`${this.name}: building ${REQUESTS + WARMUP_REQUESTS * endpoints.length} unique ${PROMPT_CHARS / 1024} KB prompts`);
    // Seeds: measured prompts 0…N-1 (every endpoint gets the same ones), warm-ups after them, so
    // the governance gateway has counted none of the measured prompts before.
    const measured = uniquePromptBodies(REQUESTS, PROMPT_CHARS, 0);
    const idle: Partial<Record<Name, HealthStats>> = {};
    const loaded: Partial<Record<Name, { health: HealthStats | undefined; load: LoadStats; errors: string[] }>> = {};

    const restore = await gov.tokenLimitOnly();
    try {
      for (const e of endpoints.filter((x) => x.probe)) {
        ctx.log(`${this.name}: idle /health baseline, ${e.name}`);
        idle[e.name] = healthStats(await idleHealth(e.origin, PROBE_EVERY_MS, IDLE_MS));
      }
      for (const [i, e] of endpoints.entries()) {
        const countHeader = e.name === 'governance' ? TOKENS_HEADER : undefined;
        await sendPrompts({ origin: e.origin, request: e.request, bodies: uniquePromptBodies(WARMUP_REQUESTS, PROMPT_CHARS, REQUESTS + i * WARMUP_REQUESTS), concurrency: CONCURRENCY });
        ctx.log(`${this.name}: ${REQUESTS} prompts, concurrency ${CONCURRENCY}, ${e.name}${e.probe ? ' (probing /health)' : ''}`);
        const probe = e.probe ? probeHealth(e.origin, PROBE_EVERY_MS) : undefined;
        const run = await sendPrompts({ origin: e.origin, request: e.request, bodies: measured, concurrency: CONCURRENCY, countHeader });
        const samples = await probe?.stop();
        loaded[e.name] = { health: samples && healthStats(samples), load: loadStats(run), errors: run.errors };
      }
    } finally {
      await restore();
    }

    const gw = loaded.gateway!;
    const gv = loaded.governance!;
    const dr = loaded.direct!;
    const row = (name: Name, phase: string, h: HealthStats | undefined, l: LoadStats | undefined): string[] => [
      name,
      phase,
      h ? String(h.probes) : '',
      fmt(h?.p50, 3),
      fmt(h?.p99, 3),
      fmt(h?.max, 3),
      l ? fmt(l.rps, 0) : '',
      fmt(l?.p50, 2),
      fmt(l?.p99, 2),
      l ? String(l.non200) : '',
    ];
    const rows = [
      row('gateway', 'idle', idle.gateway, undefined),
      row('governance', 'idle', idle.governance, undefined),
      row('direct', '100 KB load', undefined, dr.load),
      row('gateway', '100 KB load', gw.health, gw.load),
      row('governance', '100 KB load', gv.health, gv.load),
    ];

    const notes: string[] = [];
    for (const e of endpoints) {
      const l = loaded[e.name]!;
      if (l.load.non200 > 0) notes.push(`${e.name}: ${l.load.non200} of ${REQUESTS} prompts not answered 200 (${l.errors.join('; ') || 'see statuses'}): its numbers are suspect`);
    }
    if (gv.load.withTokensHeader < REQUESTS) notes.push(`governance: only ${gv.load.withTokensHeader} of ${REQUESTS} answers carried ${TOKENS_HEADER}: the tokens policy did not apply to every prompt`);
    else notes.push(`governance: all ${REQUESTS} answers carried ${TOKENS_HEADER} (the tokens policy applied; prompts counted for the reservation)`);
    const selfP99 = Math.max(gw.health?.selfP99 ?? 0, gv.health?.selfP99 ?? 0);
    notes.push(`probing process's own event-loop delay p99 ≤ ${fmt(selfP99, 2)} ms (if high, slow probes are partly the prober's)`);
    const failedProbes = [idle.gateway, idle.governance, gw.health, gv.health].reduce((sum, h) => sum + (h?.failed ?? 0), 0);
    if (failedProbes > 0) notes.push(`${failedProbes} /health probes failed`);
    if (ctx.pinning.enabled) notes.push('under pinning the token-counting threads share the proxy CPU with the gateway\'s loop: some /health delay is CPU sharing, not a blocked loop');

    return {
      name: this.name,
      isolates: this.isolates,
      table: {
        title: `Event loop under ${PROMPT_CHARS / 1024} KB prompts (${REQUESTS} unique prompts, concurrency ${CONCURRENCY}; GET /health every ${PROBE_EVERY_MS} ms; ms)`,
        columns: ['target', 'phase', 'probes', '/health p50', '/health p99', '/health max', 'req/s', 'req p50', 'req p99', 'non-200'],
        rows,
      },
      notes,
      headlines: [
        ['/health p99 / max under 100 KB prompts, governance (idle p99)', `${fmt(gv.health?.p99, 3)} / ${fmt(gv.health?.max, 3)} ms (${fmt(idle.governance?.p99, 3)})`],
        ['/health p99 / max under 100 KB prompts, plain gateway (idle p99)', `${fmt(gw.health?.p99, 3)} / ${fmt(gw.health?.max, 3)} ms (${fmt(idle.gateway?.p99, 3)})`],
        ['100 KB prompts req/s, governance ÷ gateway / ÷ direct', `${fmt(gv.load.rps / gw.load.rps)}× / ${fmt(gv.load.rps / dr.load.rps)}× (${fmt(gv.load.rps, 0)} req/s)`],
      ],
      checks: [],
      data: { requests: REQUESTS, concurrency: CONCURRENCY, promptChars: PROMPT_CHARS, probeEveryMs: PROBE_EVERY_MS, idleMs: IDLE_MS, idle, loaded },
    };
  },
};
