/**
 * h2c sanity: the same POST over cleartext HTTP/2 (prior knowledge) to the gateway only; the mock
 * and the bare proxy speak HTTP/1.1. It proves the shared h1/h2c port works under concurrent
 * streams and gives a req/s figure; h2load has no percentiles, so no latency claim is made.
 */
import { runH2load } from '../lib/h2load.js';
import { targetNamed, type Scenario } from '../lib/scenario.js';
import { round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';

const REQUESTS = 2000;
const CLIENTS = 8;
const STREAMS_PER_CLIENT = 4;

export const h2c: Scenario = {
  name: 'h2c',
  isolates: 'the gateway over cleartext HTTP/2 with concurrent streams (sanity, not a latency figure)',
  async run(ctx) {
    if (ctx.tools.h2load === null) return { name: this.name, isolates: this.isolates, skipped: 'h2load not installed (apt-get install nghttp2-client)', notes: [], checks: [], data: null };
    const gateway = targetNamed(ctx, 'gateway');
    ctx.log(`${this.name}: h2load -n ${REQUESTS} -c ${CLIENTS} -m ${STREAMS_PER_CLIENT} → gateway`);
    const result = await runH2load({ origin: gateway.origin, request: gateway.chatRequest(), requests: REQUESTS, clients: CLIENTS, streams: STREAMS_PER_CLIENT }, ctx.pinning);
    const ok = result.protocol === 'h2c' && result.status2xx === REQUESTS;
    return {
      name: this.name,
      isolates: this.isolates,
      table: {
        title: `h2c (h2load -n ${REQUESTS} -c ${CLIENTS} -m ${STREAMS_PER_CLIENT}, gateway only)`,
        columns: ['target', 'protocol', 'req/s', 'mean ms', '2xx', 'failed+errored'],
        rows: [['gateway', result.protocol, fmt(result.rps, 0), fmt(result.meanMs, 3), String(result.status2xx), String(result.failed + result.errored)]],
      },
      notes: ok ? [] : [`h2c run not clean: protocol ${result.protocol}, ${result.status2xx}/${REQUESTS} 2xx`],
      checks: [],
      headlines: [['h2c gateway req/s (h2load, sanity)', `${fmt(result.rps, 0)}${ok ? '' : ' (not clean, see notes)'}`]],
      data: { requests: REQUESTS, clients: CLIENTS, streamsPerClient: STREAMS_PER_CLIENT, ...result, rps: round(result.rps, 1) },
    };
  },
};
