/**
 * A streaming client that timestamps every SSE event as it arrives, to measure time to first event
 * and the gaps between events. It uses plain node:http with one kept-alive socket, so connection
 * setup is paid once per target and TTFB is the proxy's per-request cost, not a TCP handshake.
 *
 * An event counts when its terminating blank line arrives, which is when a real SSE client can
 * act on it. Two events landing in one read give a 0 ms gap: that is buffering, and it shows.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { BenchRequest } from './targets.js';

export interface StreamTiming {
  /** Request sent → first complete `data:` event, ms. */
  ttfbMs: number;
  /** Between consecutive `data:` events, ms. */
  gapsMs: number[];
  events: number;
  /** The stream ended with `data: [DONE]`. */
  done: boolean;
}

export interface StreamClient {
  stream(origin: string, req: BenchRequest, timeoutMs: number): Promise<StreamTiming>;
  close(): void;
}

export function createStreamClient(): StreamClient {
  // One socket per origin: requests are sequential, and a second socket would mean a new handshake.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    stream: (origin, req, timeoutMs) => timedStream(agent, origin, req, timeoutMs),
    close: () => agent.destroy(),
  };
}

function timedStream(agent: Agent, origin: string, bench: BenchRequest, timeoutMs: number): Promise<StreamTiming> {
  return new Promise((resolve, reject) => {
    const times: number[] = [];
    let pending = '';
    let done = false;
    const req = request(`${origin}${bench.path}`, { method: 'POST', agent, headers: { ...bench.headers, 'content-length': Buffer.byteLength(bench.body) } });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`stream timed out after ${timeoutMs} ms`)));
    req.once('error', reject);
    req.once('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`status ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      res.on('data', function onData(text: string) {
        const now = performance.now();
        pending += text;
        let end = pending.indexOf('\n\n');
        // Bounded by the text received: each pass consumes one event.
        while (end !== -1) {
          const event = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (event.startsWith('data:')) {
            times.push(now);
            if (event.startsWith('data: [DONE]')) done = true;
          }
          end = pending.indexOf('\n\n');
        }
      });
      res.once('error', reject);
      res.once('end', () => {
        const gapsMs: number[] = [];
        for (let i = 1; i < times.length; i++) gapsMs.push(times[i]! - times[i - 1]!);
        resolve({ ttfbMs: times.length > 0 ? times[0]! - start : Number.NaN, gapsMs, events: times.length, done });
      });
    });
    const start = performance.now();
    req.end(bench.body);
  });
}

/** Streams per target before the timed ones (see {@link warmStreams}). */
export const WARM_STREAMS = 2000;
/** The warm-up streams' mock directives: the timed streams' events, sent without the pauses. */
export const WARM_DIRECTIVES = 'chunks=20;chunk_delay=0';

/**
 * Runs `n` unmeasured streams of `request` (built with {@link WARM_DIRECTIVES}, so they take about
 * a millisecond each) before streams are timed. A gateway's stream path is code of its own (the
 * SSE parser, event stages, the usage of the last event), which a scenario's few timed streams
 * would otherwise measure before V8 has optimised it: the first event of a stream through the
 * default pipeline took about 0.45 ms longer after the throughput rounds alone than after a few
 * thousand streams. The bare proxy pipes every answer through the same code, already hot from
 * the throughput rounds. Warming both sides measures a gateway in service, as the MCP scenario does.
 */
export async function warmStreams(client: StreamClient, origin: string, request: BenchRequest, n = WARM_STREAMS): Promise<void> {
  for (let i = 0; i < n; i++) await client.stream(origin, request, 10_000);
}
