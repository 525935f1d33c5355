/**
 * Large, unique chat prompts sent at a fixed concurrency (the event-loop scenario). Unique, so
 * nothing on the way can reuse an earlier count or answer; built as Buffers before the clock
 * starts, so building them does not load this process's loop, which also runs the /health probe.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { BenchRequest } from './targets.js';

/** Everyday words, numbers and punctuation: tokenizes like prose, not like one repeated token. */
const WORDS = (
  'the of and to in is that for it as with was on be by this are or from at an which but not have ' +
  'has had were their they one all would there been if more when will other into some could these ' +
  'gateway request token budget limit stream answer model prompt latency upstream policy cache key ' +
  'configuration, workspace. provider; retry: 42 2025 3.14 #17 (note) "quoted" user\'s café naïve'
).split(' ');

/** mulberry32: a tiny seeded PRNG, so a run's prompts are reproducible and differ by seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` chat completion bodies, each with one user message of about `chars` characters of
 * pseudo-random prose; body `i` uses seed `firstSeed + i`, so different seeds never repeat.
 */
export function uniquePromptBodies(count: number, chars: number, firstSeed: number): Buffer[] {
  const bodies: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const seed = firstSeed + i;
    const random = prng(seed);
    const words = [`Prompt ${seed}:`];
    let length = words[0]!.length;
    // Bounded by `chars`: every word adds at least two characters.
    while (length < chars) {
      const word = WORDS[Math.floor(random() * WORDS.length)]!;
      words.push(word);
      length += word.length + 1;
    }
    bodies.push(Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: words.join(' ') }], max_tokens: 16 })));
  }
  return bodies;
}

export interface PromptRun {
  durationMs: number;
  /** Per request, send → end of the answer. */
  latenciesMs: number[];
  /** Answers by status code; "error" counts socket errors and timeouts. */
  statuses: Record<string, number>;
  /** Answers that carried `countHeader`. */
  withHeader: number;
  /** The first few failures, for the notes. */
  errors: string[];
}

export interface PromptLoad {
  origin: string;
  /** Path and headers to use; its body is replaced by each of `bodies`. */
  request: BenchRequest;
  bodies: readonly Buffer[];
  concurrency: number;
  /** A response header to count (e.g. proof that a policy applied). */
  countHeader?: string;
  timeoutMs?: number;
}

function sendOne(agent: Agent, load: PromptLoad, body: Buffer): Promise<{ status: number; header: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${load.origin}${load.request.path}`, { method: 'POST', agent, headers: { ...load.request.headers, 'content-length': body.length } }, (res) => {
      res.resume();
      res.once('error', reject);
      res.once('end', () => resolve({ status: res.statusCode ?? 0, header: load.countHeader !== undefined && res.headers[load.countHeader] !== undefined }));
    });
    req.setTimeout(load.timeoutMs ?? 30_000, () => req.destroy(new Error('request timed out')));
    req.once('error', reject);
    req.end(body);
  });
}

/** Sends every body once, `concurrency` at a time, each on a kept-alive socket of its own. */
export async function sendPrompts(load: PromptLoad): Promise<PromptRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: load.concurrency });
  const run: PromptRun = { durationMs: 0, latenciesMs: [], statuses: {}, withHeader: 0, errors: [] };
  let next = 0;
  async function worker(): Promise<void> {
    // Bounded by the bodies: each pass takes one.
    while (next < load.bodies.length) {
      const body = load.bodies[next++]!;
      const start = performance.now();
      try {
        const answer = await sendOne(agent, load, body);
        run.latenciesMs.push(performance.now() - start);
        run.statuses[answer.status] = (run.statuses[answer.status] ?? 0) + 1;
        if (answer.header) run.withHeader++;
      } catch (error) {
        run.statuses.error = (run.statuses.error ?? 0) + 1;
        if (run.errors.length < 3) run.errors.push((error as Error).message);
      }
    }
  }
  const start = performance.now();
  try {
    await Promise.all(Array.from({ length: load.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  run.durationMs = performance.now() - start;
  return run;
}
