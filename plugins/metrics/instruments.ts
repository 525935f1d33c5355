/**
 * The gateway's request metrics, one set per pipeline, in the plugin's own registry (never
 * prom-client's global one: two gateways in one process, or a reload, must not share counters).
 *
 * Everything is recorded from the one log record (`buildLogRecord`), so `/metrics`, the logs and
 * the analytics agree on route, status, provider, model, latency, tokens and cost.
 */
import { Registry } from 'prom-client';
import { isMcpCallMethod, type LogRecord } from '../../core/index.js';
import { LabelSets } from './label-sets.js';
import { CellMemo, CounterFamily, HistogramFamily, type CounterCell, type HistogramCell } from './series.js';

/**
 * Seconds. The low end is for the gateway's own overhead (tens of µs); the high end for long
 * generations and streams.
 */
export const DURATION_BUCKETS: ReadonlyArray<number> = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Error codes that mean "refused by a limit", by the `reason` label they count under. */
const REJECTIONS: ReadonlyMap<string, string> = new Map([
  ['rate_limit_exceeded', 'rate_limit'],
  ['usage_limit_exceeded', 'usage_limit'],
  ['guardrail_denied', 'guardrail'],
]);

export interface RequestMetrics {
  readonly registry: Registry;
  /** Records one finished request. Synchronous and allocation-free for known label sets: it runs in every `onDone`. */
  record(rec: LogRecord): void;
}

export function createRequestMetrics(maxLabelSets: number): RequestMetrics {
  const registry = new Registry();
  const registers = [registry];
  const buckets = [...DURATION_BUCKETS];
  const histogram = (name: string, help: string): HistogramFamily<'route'> => new HistogramFamily({ name, help, labelNames: ['route'], buckets, registers });

  const requests = new CounterFamily({ name: 'gateway_requests_total', help: 'Requests answered, by route, status and provider.', labelNames: ['route', 'status', 'provider'], registers });
  const duration = histogram('gateway_request_duration_seconds', 'Total time from request to last byte.');
  const upstream = histogram('gateway_upstream_duration_seconds', 'Time spent waiting on upstreams (all attempts), for requests that called one.');
  const overhead = histogram('gateway_overhead_duration_seconds', "The gateway's own time: total minus upstream (streams: time to first byte minus upstream).");
  const ttfb = histogram('gateway_time_to_first_byte_seconds', 'Time to the first byte of a streamed answer (time to first token).');
  const tokens = new CounterFamily({ name: 'gateway_tokens_total', help: 'Tokens metered, by type (prompt, completion), provider and model.', labelNames: ['type', 'provider', 'model'], registers });
  const cost = new CounterFamily({ name: 'gateway_cost_cents_total', help: 'Cost of metered usage in USD cents, priced with the pricing table.', labelNames: ['provider', 'model'], registers });
  const cache = new CounterFamily({ name: 'gateway_cache_requests_total', help: 'Requests that consulted the cache, by cache status.', labelNames: ['status'], registers });
  const invalid = new CounterFamily({
    name: 'gateway_upstream_invalid_responses_total',
    help: 'Upstream answers the gateway could not read (a 2xx model answer that is not JSON, or one no dialect could translate), by provider.',
    labelNames: ['provider'],
    registers,
  });
  const rejections = new CounterFamily({ name: 'gateway_rejections_total', help: 'Requests refused by a limit or a guardrail (rate_limit, usage_limit, guardrail).', labelNames: ['reason'], registers });
  const guardrailChecks = new CounterFamily({
    name: 'gateway_guardrail_checks_total',
    help: 'Guardrail checks run, by check id, phase (input, output) and verdict (pass, fail, error).',
    labelNames: ['check', 'phase', 'verdict'],
    registers,
  });
  const checkSets = new LabelSets(maxLabelSets);
  // MCP calls (tools/call, resources/read, prompts/get; never protocol messages), from the record's `mcp`.
  const mcpCalls = new CounterFamily({
    name: 'gateway_mcp_calls_total',
    help: 'MCP calls (tools/call, resources/read, prompts/get), by server, method, tool (or prompt, or resource) and outcome (ok, error, denied, cancelled).',
    labelNames: ['server', 'method', 'tool', 'outcome'],
    registers,
  });
  const mcpDuration = new HistogramFamily({
    name: 'gateway_mcp_call_duration_seconds',
    help: 'MCP calls from request to last byte, by server and method.',
    labelNames: ['server', 'method'],
    buckets,
    registers,
  });
  const mcpCallSets = new LabelSets(maxLabelSets);
  const mcpDurationSets = new LabelSets(maxLabelSets);

  // One cap per metric that takes traffic-derived labels (route and status are bounded by the core).
  // Both reasons exist from the first scrape, so `rate()` and alerts see a 0 rather than no series.
  for (const reason of REJECTIONS.values()) rejections.cell({ reason });

  const requestSets = new LabelSets(maxLabelSets);
  const tokenSets = new LabelSets(maxLabelSets);
  const costSets = new LabelSets(maxLabelSets);
  const cacheSets = new LabelSets(maxLabelSets);
  const invalidSets = new LabelSets(maxLabelSets);

  /**
   * A counter's cell: by the key of the raw values when that set was admitted before (no label
   * object is built), else through the cap (which may fold the set into `other`).
   */
  function counter<L extends string>(family: CounterFamily<L>, sets: LabelSets, key: string, labels: () => Record<L, string>, free: ReadonlyArray<L>): CounterCell {
    return family.known(key) ?? family.cell(sets.admit(labels(), free));
  }
  /** A route histogram's cells by route (bounded by the core): no key string per observation. */
  const routeCells = new Map<HistogramFamily<'route'>, Map<string, HistogramCell>>();
  for (const family of [duration, overhead, upstream, ttfb]) routeCells.set(family, new Map());
  const byRoute = (family: HistogramFamily<'route'>, route: string): HistogramCell => {
    const cells = routeCells.get(family)!;
    let cell = cells.get(route);
    if (cell === undefined) cells.set(route, (cell = family.cell({ route })));
    return cell;
  };
  // The hot path's counters by raw label values (see CellMemo), each set through its cap once.
  const memoMax = 4 * maxLabelSets;
  const requestCells = new CellMemo<string, number, string, CounterCell>(memoMax);
  const requestCell = (route: string, status: number, provider: string): CounterCell =>
    requestCells.get(route, status, provider) ??
    requestCells.set(route, status, provider, counter(requests, requestSets, `${route}\u0000${status}\u0000${provider}\u0000`, () => ({ route, status: String(status), provider }), ['provider', 'status']));
  interface UsageCells {
    prompt: CounterCell;
    completion: CounterCell;
    cost: CounterCell;
  }
  const usageCells = new CellMemo<string, string, null, UsageCells>(memoMax);
  const usageCell = (provider: string, model: string): UsageCells => {
    const known = usageCells.get(provider, model, null);
    if (known !== undefined) return known;
    const pm = `${provider}\u0000${model}\u0000`;
    return usageCells.set(provider, model, null, {
      prompt: counter(tokens, tokenSets, `prompt\u0000${pm}`, () => ({ type: 'prompt', provider, model }), ['provider', 'model']),
      completion: counter(tokens, tokenSets, `completion\u0000${pm}`, () => ({ type: 'completion', provider, model }), ['provider', 'model']),
      cost: counter(cost, costSets, pm, () => ({ provider, model }), ['provider', 'model']),
    });
  };

  return {
    registry,
    record(rec) {
      const route = rec.route;
      const provider = rec.provider ?? 'none';
      const status = rec.status;
      requestCell(route, status, provider).value++;
      const l = rec.latency;
      duration.observe(byRoute(duration, route), l.total_ms / 1000);
      // The core's upstream time ends at the upstream's response head, so for a stream total −
      // upstream would count the whole generation as overhead; its gateway part is what came
      // before the first byte: time to first byte − upstream.
      const overheadMs = rec.stream && l.ttfb_ms !== null ? Math.max(0, l.ttfb_ms - l.upstream_ms) : l.gateway_ms;
      overhead.observe(byRoute(overhead, route), overheadMs / 1000);
      if (l.upstream_ms > 0) upstream.observe(byRoute(upstream, route), l.upstream_ms / 1000);
      if (rec.stream && l.ttfb_ms !== null) ttfb.observe(byRoute(ttfb, route), l.ttfb_ms / 1000);
      // Model labels only for metered answers: a model name a caller typed and that never reached
      // an upstream (a 400, a 401) must not mint a series.
      if (rec.usage !== null) {
        const cells = usageCell(provider, rec.model ?? 'unknown');
        cells.prompt.value += rec.usage.prompt_tokens;
        cells.completion.value += rec.usage.completion_tokens;
        cells.cost.value += rec.cost_cents;
      }
      const cacheStatus = rec.cache_status;
      if (cacheStatus !== 'DISABLED') counter(cache, cacheSets, `${cacheStatus}\u0000`, () => ({ status: cacheStatus }), ['status']).value++;
      if (rec.error_code === 'upstream_invalid_response') counter(invalid, invalidSets, `${provider}\u0000`, () => ({ provider }), ['provider']).value++;
      const reason = rec.error_code === null ? undefined : REJECTIONS.get(rec.error_code);
      if (reason !== undefined) rejections.cell({ reason }).value++;
      const mcp = rec.mcp;
      if (mcp !== undefined && isMcpCallMethod(mcp.method)) {
        const server = mcp.server ?? 'none';
        const method = mcp.method!;
        const tool = mcp.tool ?? 'none';
        const outcome = mcp.outcome ?? 'error';
        counter(mcpCalls, mcpCallSets, `${server}\u0000${method}\u0000${tool}\u0000${outcome}\u0000`, () => ({ server, method, tool, outcome }), ['server', 'tool']).value++;
        const cell = mcpDuration.known(`${server}\u0000${method}\u0000`) ?? mcpDuration.cell(mcpDurationSets.admit({ server, method }, ['server']));
        mcpDuration.observe(cell, l.total_ms / 1000);
      }
      const g = rec.guardrails;
      if (g !== undefined) {
        for (const [phase, list] of [['input', g.results.before_request_hooks], ['output', g.results.after_request_hooks]] as const) {
          for (const o of list) {
            for (const c of o.checks) {
              const verdict = c.error !== undefined ? 'error' : c.verdict ? 'pass' : 'fail';
              counter(guardrailChecks, checkSets, `${c.id}\u0000${phase}\u0000${verdict}\u0000`, () => ({ check: c.id, phase, verdict }), ['check']).value++;
            }
          }
        }
      }
    },
  };
}
