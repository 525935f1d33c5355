/**
 * What the MCP gateway adds to a tool call (issue 16): `tools/call` of an echo tool through the
 * shipped pipeline (`/<slug>/mcp`, a workspace key with `mcp.invoke`, every call logged) against
 * the same call straight to the same MCP server, one call at a time, in interleaved rounds.
 *
 *   SDK client ──────────────────────────────► MCP server (SDK, Streamable HTTP)     direct
 *   SDK client ──► bare proxy ───────────────► MCP server                            bare
 *   SDK client ──► gateway ── relay ─────────► MCP server                            gateway
 *
 * (`tools/call` takes the gateway's relay, plugins/mcp-gateway/relay.ts; the session's initialize
 * goes through the SDK's server and client there.)
 *
 * The MCP server runs in the bench driver (the test suite's server, test/helpers/mcp-upstream.ts),
 * so every path shares its cost and the client's; the difference of the p50s is the gateway's.
 * The bare proxy (bench/bare-proxy.ts, pinned like the gateway) is the floor of any Node hop in
 * the same rounds: what a proxy that does nothing adds to the same call on this machine.
 * Target: ≤ 0.3 ms added at p50.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Service } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';
import { cpuMs } from '../lib/proc-cpu.js';
import { median, percentile, round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import { startMcpUpstream } from '../../test/helpers/mcp-upstream.js';
import { startBareProxyProcess } from '../lib/services.js';
import { startDefaultPipeline } from './default-pipeline.js';

const MAX_ADDED_P50_MS = 0.3;
const PATHS = ['direct', 'bare', 'gateway'] as const;
const ROUNDS = 6;
const CALLS_PER_ROUND = 400;
/**
 * Calls before the rounds, on each path: the driver's SDK client and server, and the bare proxy,
 * are optimised by then.
 */
const WARMUP = 2000;
/**
 * Calls before the rounds through the gateway, which runs far more code per call than the bare
 * proxy, each function once a call: V8 optimises such a function only after thousands of calls.
 * Measured with `--trace-opt` on a fresh gateway, one call at a time: 391 functions optimised in
 * the first 1,500 calls and 164 more during the next 1,200 (the rounds then measured the JIT, at
 * 1,500 µs of CPU per call and +0.5 ms over the bare proxy); after 10,000 calls, 11 more during
 * the next 1,200 (800 µs a call, +0.11 ms over the bare proxy).
 */
const GATEWAY_WARMUP = 12_000;

async function admin(origin: string, key: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${origin}${path}`, { method: 'POST', headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return answer;
}

async function client(url: string, headers: Record<string, string>): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return c;
}

/**
 * Node's warnings, minus the MaxListenersExceededWarnings of this driver's own SDK clients (said
 * once through `log`). Their transports pass one long-lived abort signal to Node's `fetch`, whose
 * listener per call comes off only when the call is garbage-collected: hundreds of lines a run, of
 * the driver, not of the gateway (which gives its SDK clients a fetch that does not do this). Returns
 * the undo.
 */
function quietDriverListenerWarnings(log: (line: string) => void): () => void {
  const printers = process.listeners('warning');
  let told = false;
  const filter = (warning: Error): void => {
    if (warning.name !== 'MaxListenersExceededWarning') return printers.forEach((print) => print(warning));
    if (!told) log("mcp: the driver's SDK clients pass Node's fetch one long-lived abort signal; its listener warnings are not shown");
    told = true;
  };
  process.removeAllListeners('warning');
  process.on('warning', filter);
  return () => {
    process.off('warning', filter);
    for (const print of printers) process.on('warning', print);
  };
}

/** Sequential calls; per-call latency in ms. */
async function calls(c: Client, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await c.callTool({ name: 'echo', arguments: { text: 'bench' } });
    out.push(performance.now() - t0);
  }
  return out;
}

export const mcp: Scenario = {
  name: 'mcp',
  isolates: 'tools/call through the MCP gateway (shipped pipeline, logged) against the same call straight to the MCP server, c=1',
  async run(ctx) {
    const teardowns: Array<() => unknown> = [];
    const upstream = await startMcpUpstream({ teardown: (fn) => teardowns.push(fn) });
    const [, , plain] = ctx.targets;
    const { gateway, request } = await startDefaultPipeline(ctx, plain!.chatRequest());
    const clients: Client[] = [];
    const upstreamUrl = new URL(upstream.url);
    let bare: Service | undefined;
    try {
      bare = await startBareProxyProcess(ctx.pinning, upstreamUrl.origin, 'bare proxy (MCP)');
      teardowns.push(quietDriverListenerWarnings(ctx.log));
      const adminKey = request.headers['x-gateway-api-key']!;
      await admin(gateway.url, adminKey, '/v1/mcp-integrations', { name: 'bench', slug: 'bench-int', url: upstream.url, transport: 'http', auth_type: 'none', workspace_id: 'default' });
      await admin(gateway.url, adminKey, '/v1/mcp-servers', { name: 'bench', slug: 'bench', mcp_integration_id: 'bench-int', workspace_id: 'default' });
      const key = (await admin(gateway.url, adminKey, '/v1/api-keys/workspace/service', { name: 'bench agent', scopes: ['mcp.invoke'], workspace_id: 'default' })).key as string;
      const direct = await client(upstream.url, {});
      const viaBare = await client(`${bare.url}${upstreamUrl.pathname}`, {});
      const through = await client(`${gateway.url}/bench/mcp`, { authorization: `Bearer ${key}` });
      clients.push(direct, viaBare, through);
      const path = { direct, bare: viaBare, gateway: through };
      await calls(direct, WARMUP);
      await calls(viaBare, WARMUP);
      const warmStart = cpuMs(gateway.pid);
      await calls(through, GATEWAY_WARMUP);
      const warmCpu = ((cpuMs(gateway.pid) - warmStart) * 1000) / GATEWAY_WARMUP;
      const samples = { direct: [] as number[], bare: [] as number[], gateway: [] as number[] };
      const p50s = { direct: [] as number[], bare: [] as number[], gateway: [] as number[] };
      /** The gateway process's CPU per call in each round (every thread: the log thread too). */
      const cpuPerCall: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        ctx.log(`mcp round ${r + 1}/${ROUNDS}`);
        // Rotate which goes first, so drift spreads over all three.
        const order = PATHS.map((_, i) => PATHS[(i + r) % PATHS.length]!);
        for (const which of order) {
          const before = cpuMs(gateway.pid);
          const got = await calls(path[which], CALLS_PER_ROUND);
          if (which === 'gateway') cpuPerCall.push(((cpuMs(gateway.pid) - before) * 1000) / CALLS_PER_ROUND);
          samples[which].push(...got);
          p50s[which].push(percentile(got, 50));
        }
      }
      const added = p50s.gateway.map((g, i) => g - p50s.direct[i]!);
      const addedP50 = median(added);
      const bareAdded = p50s.bare.map((b, i) => b - p50s.direct[i]!);
      const bareAddedP50 = median(bareAdded);
      const overBareP50 = median(p50s.gateway.map((g, i) => g - p50s.bare[i]!));
      const row = (name: string, s: number[]): string[] => [name, fmt(percentile(s, 50), 3), fmt(percentile(s, 99), 3), fmt(1000 / (s.reduce((a, b) => a + b, 0) / s.length), 0)];
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `MCP tools/call, c=1, ${ROUNDS} rounds × ${CALLS_PER_ROUND} calls`,
          columns: ['path', 'p50 ms', 'p99 ms', 'calls/s'],
          rows: [
            row('direct to the MCP server', samples.direct),
            row('through the bare proxy', samples.bare),
            row('through the gateway', samples.gateway),
            ['bare proxy: added at p50 (median of rounds)', fmtDelta(bareAddedP50), '', ''],
            ['gateway: added at p50 (median of rounds)', fmtDelta(addedP50), '', ''],
            ['gateway over the bare proxy at p50', fmtDelta(overBareP50), '', ''],
          ],
        },
        notes: [
          `added p50 per round (ms): gateway ${added.map((a) => fmtDelta(a)).join(', ')}; bare proxy ${bareAdded.map((a) => fmtDelta(a)).join(', ')}`,
          `gateway CPU per call over its ${GATEWAY_WARMUP} warm-up calls: ${fmt(warmCpu, 0)} µs`,
          `gateway CPU per call (µs, all its threads; steadier than latency on a shared machine): median ${fmt(median(cpuPerCall), 0)}, rounds ${cpuPerCall.map((c) => fmt(c, 0)).join(', ')}`,
        ],
        checks: [{ name: 'MCP tools/call added at p50', value: round(addedP50, 3), target: `≤ ${MAX_ADDED_P50_MS} ms`, unit: 'ms', pass: addedP50 <= MAX_ADDED_P50_MS }],
        headlines: [['MCP tools/call added p50, gateway / bare proxy', `${fmtDelta(addedP50)} / ${fmtDelta(bareAddedP50)} ms`]],
        data: { rounds: ROUNDS, callsPerRound: CALLS_PER_ROUND, warmup: WARMUP, gatewayWarmup: GATEWAY_WARMUP, gatewayWarmupCpuUsPerCall: round(warmCpu, 0), p50s, added, bareAdded, overBareP50, gatewayCpuUsPerCall: cpuPerCall },
      };
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await Promise.all([gateway.stop(), bare?.stop()]);
      for (const fn of teardowns.reverse()) await fn();
    }
  },
};
