/**
 * HTTP/2 against HTTP/1.1 on the same gateway code, in the same run (issue 13's target: h2c and h2
 * over TLS at ≥ 0.5× HTTP/1.1 throughput):
 *
 *   h1    wrk -c32                       → the plain gateway (cleartext port)
 *   h2c   h2load -c 8 -m 4 (prior knowledge) → the same gateway, same port
 *   h2    h2load -c 8 -m 4 over TLS (ALPN)   → a second gateway on the same build, `server.tls` set
 *   h1s   wrk -c32 over TLS                  → that TLS gateway, HTTP/1.1 by ALPN
 *
 * Fair load: both tools keep the same number of requests in flight (`--connections`, 32: wrk with
 * one per connection, h2load with 8 connections × 4 streams), run for the same duration after the
 * same warm-up (h2load's `--warm-up-time`), and the four runs are interleaved per round so machine
 * drift spreads over all of them. The mock upstream speaks HTTP/1.1 in every case: only the client
 * leg changes protocol. Besides req/s, the gateway's CPU time per request is read from /proc
 * (user + system over the run ÷ requests): on a shared machine it moves much less than req/s.
 * h2load reports no percentiles, so no latency claim is made.
 */
import { fileURLToPath } from 'node:url';
import { startGatewayProcess } from '../lib/gateway-process.js';
import { runH2load, type H2loadResult } from '../lib/h2load.js';
import type { LoadResult } from '../lib/load-tool.js';
import { cpuMs } from '../lib/proc-cpu.js';
import { targetNamed, type Scenario } from '../lib/scenario.js';
import { median, round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import { runTempDir } from '../lib/temp-dir.js';

const MIN_RATIO_TO_H1 = 0.5;
const H2_CLIENTS = 8;
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/tls/', import.meta.url));

type Leg = 'h1' | 'h2c' | 'h2' | 'h1s';
const LEGS: readonly Leg[] = ['h1', 'h2c', 'h2', 'h1s'];
const LABEL: Record<Leg, string> = { h1: 'HTTP/1.1', h2c: 'h2c (cleartext)', h2: 'h2 (TLS)', h1s: 'HTTP/1.1 (TLS)' };

interface LegRun {
  rps: number;
  requests: number;
  errors: number;
  /** Gateway CPU per request, µs. */
  cpuUsPerRequest: number;
  protocol?: string;
}

export const http2: Scenario = {
  name: 'http2',
  isolates: 'HTTP/2 (h2c and h2 over TLS) against HTTP/1.1 on the same gateway, same in-flight requests',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (ctx.tools.h2load === null) return { name: this.name, isolates: this.isolates, skipped: 'h2load not installed (apt-get install nghttp2-client)', notes: [], checks: [], data: null };
    if (tool === null || tool.name !== 'wrk') return { name: this.name, isolates: this.isolates, skipped: 'needs wrk for the HTTP/1.1 legs (TLS)', notes: [], checks: [], data: null };
    const gateway = targetNamed(ctx, 'gateway');
    const secure = await startGatewayProcess({
      pinning: ctx.pinning,
      name: 'TLS gateway',
      dir: runTempDir('gateway-tls'),
      pipeline: '[]',
      server: `tls: {cert: ${JSON.stringify(`${FIXTURES}cert.pem`)}, key: ${JSON.stringify(`${FIXTURES}key.pem`)}}`,
    });
    try {
      const request = gateway.chatRequest();
      const inFlight = ctx.options.connections;
      const streams = Math.max(1, Math.round(inFlight / H2_CLIENTS));
      const origin: Record<Leg, string> = { h1: gateway.origin, h2c: gateway.origin, h2: secure.url, h1s: secure.url };
      const pid: Record<Leg, number> = { h1: gateway.pid, h2c: gateway.pid, h2: secure.pid, h1s: secure.pid };
      const rounds: Record<Leg, LegRun[]> = { h1: [], h2c: [], h2: [], h1s: [] };
      for (let r = 1; r <= ctx.options.rounds; r++) {
        for (const leg of LEGS) {
          ctx.log(`${this.name}: round ${r}/${ctx.options.rounds}, ${leg}`);
          if (leg === 'h1' || leg === 'h1s') {
            const spec = { origin: origin[leg], request, connections: inFlight };
            if (ctx.options.warmup > 0) await tool.run({ ...spec, durationSec: ctx.options.warmup });
            const before = cpuMs(pid[leg]);
            const result: LoadResult = await tool.run({ ...spec, durationSec: ctx.options.duration });
            rounds[leg].push({ rps: result.rps, requests: result.requests, errors: result.errors, cpuUsPerRequest: ((cpuMs(pid[leg]) - before) * 1000) / result.requests });
          } else {
            // The warm-up is part of the h2load run (not counted), so its CPU is read around both.
            const warmupSec = ctx.options.warmup;
            const before = cpuMs(pid[leg]);
            const result: H2loadResult = await runH2load({ origin: origin[leg], request, durationSec: ctx.options.duration, warmupSec, clients: H2_CLIENTS, streams }, ctx.pinning);
            const measured = result.status2xx + result.failed + result.errored;
            // CPU over warm-up + run, scaled to the measured share of the requests.
            const total = measured + result.rps * warmupSec;
            rounds[leg].push({
              rps: result.rps,
              requests: measured,
              errors: result.failed + result.errored + (measured - result.status2xx),
              cpuUsPerRequest: ((cpuMs(pid[leg]) - before) * 1000) / total,
              protocol: result.protocol,
            });
          }
        }
      }
      const perRound = (leg: Leg): number[] => rounds[leg].map((run, i) => run.rps / rounds.h1[i]!.rps);
      const ratio: Record<Leg, number> = { h1: 1, h2c: round(median(perRound('h2c'))), h2: round(median(perRound('h2'))), h1s: round(median(perRound('h1s'))) };
      const cpu = (leg: Leg): number => round(median(rounds[leg].map((x) => x.cpuUsPerRequest)), 1);
      const errors = (leg: Leg): number => rounds[leg].reduce((n, x) => n + x.errors, 0);
      const protocols = { h2c: rounds.h2c[0]?.protocol, h2: rounds.h2[0]?.protocol };
      const clean = (leg: Leg): boolean => errors(leg) === 0 && (leg !== 'h2c' || protocols.h2c === 'h2c') && (leg !== 'h2' || protocols.h2 === 'h2');
      const notes: string[] = [];
      for (const leg of LEGS) if (!clean(leg)) notes.push(`${leg}: ${errors(leg)} errors${leg === 'h2c' || leg === 'h2' ? `, protocol ${protocols[leg]}` : ''}`);
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `HTTP/2 vs HTTP/1.1 (${inFlight} requests in flight: wrk -c${inFlight}, h2load -c ${H2_CLIENTS} -m ${streams}; ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median)`,
          columns: ['client leg', 'req/s', '÷ HTTP/1.1', 'gateway CPU µs/req', 'errors'],
          rows: LEGS.map((leg) => [LABEL[leg], fmt(median(rounds[leg].map((x) => x.rps)), 0), fmt(ratio[leg]), fmt(cpu(leg), 1), String(errors(leg))]),
        },
        notes,
        headlines: [['h2c / h2 (TLS) throughput ÷ HTTP/1.1', `${fmt(ratio.h2c)}× / ${fmt(ratio.h2)}×`]],
        checks: [
          { name: 'h2c ÷ HTTP/1.1 throughput', value: ratio.h2c, target: `≥ ${MIN_RATIO_TO_H1}`, unit: '×', pass: ratio.h2c >= MIN_RATIO_TO_H1 && clean('h2c') },
          { name: 'h2 (TLS) ÷ HTTP/1.1 throughput', value: ratio.h2, target: `≥ ${MIN_RATIO_TO_H1}`, unit: '×', pass: ratio.h2 >= MIN_RATIO_TO_H1 && clean('h2') },
        ],
        data: { inFlight, h2Clients: H2_CLIENTS, streamsPerClient: streams, ratio, cpuUsPerRequest: Object.fromEntries(LEGS.map((l) => [l, cpu(l)])), protocols, rounds },
      };
    } finally {
      await secure.stop();
    }
  },
};
