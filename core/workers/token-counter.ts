/**
 * The gateway's token counter: small inputs inline, large ones on a piscina pool, behind a
 * bounded FIFO of its own.
 *
 *   countPrompt / countText
 *        │ texts < inlineBelowChars ──▶ countJob() on the main thread (a round trip costs more)
 *        ▼
 *   running < threads ? ──yes──▶ pool.run(job) ──▶ worker: countJob()     (at most `threads` in flight)
 *        │ no
 *        ▼
 *   waiting (≤ maxQueue, FIFO) ── full ──▶ 503 `overloaded` at once
 *        │ a finished task pulls the next; an aborted signal removes its entry
 *
 * Why a queue in front of piscina's own: piscina cancels a *running* task by terminating its
 * thread, and the respawn reloads the tokenizer ranks (~0.3 s). Client disconnects are routine,
 * so only waiting tasks are cancelled; a running count (milliseconds) finishes and its caller has
 * stopped waiting. Keeping exactly `threads` tasks in piscina makes "waiting" mean "not started".
 */
import { Piscina } from 'piscina';
import { Errors } from '../errors.js';
import type { ModelRoute } from '../routes.js';
import type { TokenCounter } from './types.js';
import { countJob, encodingForModel, type CountJob } from './encodings.js';
import { promptParts } from './prompt-text.js';

export interface TokenCounterOptions {
  /** Worker threads, started together on the first large count; default 2. */
  threads?: number;
  /** Large counts that may wait for a thread; beyond it a count fails with 503 `overloaded`. Default 1000. */
  maxQueue?: number;
  /** Inputs with fewer characters than this are counted on the calling thread; default 2000. */
  inlineBelowChars?: number;
}

export interface TokenCounterStats {
  /** False until the first count that needed the pool: a gateway that never counts never pays. */
  poolStarted: boolean;
  /** Counts on the pool now, at most `threads`. */
  running: number;
  /** Counts waiting for a thread, at most `maxQueue`. */
  queued: number;
}

/** A {@link TokenCounter} that also shows its pool, for tests and metrics. */
export interface PooledTokenCounter extends TokenCounter {
  readonly stats: TokenCounterStats;
}

interface Waiting {
  job: CountJob;
  signal: AbortSignal | undefined;
  resolve(tokens: number): void;
  reject(reason: unknown): void;
  onAbort(): void;
}

// tsc puts the compiled worker next to this module (dist/core/workers/).
const WORKER_FILE = new URL('./count-tokens.worker.js', import.meta.url).href;

function charsOf(job: CountJob): number {
  let chars = 0;
  for (const text of job.texts) chars += text.length;
  return chars;
}

/**
 * Creates a token counter. One per gateway: its threads are shared by every pipeline.
 *
 * @example
 *   const tokens = createTokenCounter();
 *   const n = await tokens.countPrompt('chat.completions', body, ctx.signal);
 *   await tokens.close();
 */
export function createTokenCounter(options: TokenCounterOptions = {}): PooledTokenCounter {
  const threads = Math.max(1, options.threads ?? 2);
  const maxQueue = Math.max(0, options.maxQueue ?? 1000);
  const inlineBelowChars = options.inlineBelowChars ?? 2000;

  let pool: Piscina<CountJob, number> | undefined;
  let running = 0;
  // A Set keeps insertion order (FIFO) and deletes an aborted entry in O(1).
  const waiting = new Set<Waiting>();
  let closed = false;

  function startPool(): Piscina<CountJob, number> {
    // Started on first need (~0.3 s with the ranks loading in each worker). piscina's own queue
    // never holds more than `threads` here; its bound is a backstop.
    pool ??= new Piscina<CountJob, number>({ filename: WORKER_FILE, minThreads: threads, maxThreads: threads, maxQueue: threads });
    return pool;
  }

  function execute(job: CountJob, signal: AbortSignal | undefined): Promise<number> {
    running++;
    const result = startPool()
      .run(job)
      .then(
        (tokens) => {
          running--;
          pump();
          return tokens;
        },
        (err: unknown) => {
          running--;
          pump();
          throw Errors.internal('Token counting failed.', { cause: err });
        },
      );
    if (signal === undefined) return result;
    // Running: the caller stops waiting, the thread finishes its few milliseconds (see the top).
    return new Promise<number>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      void result.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  function pump(): void {
    while (!closed && running < threads && waiting.size > 0) {
      const next = waiting.values().next().value as Waiting;
      waiting.delete(next);
      next.signal?.removeEventListener('abort', next.onAbort);
      execute(next.job, next.signal).then(next.resolve, next.reject);
    }
  }

  function submit(job: CountJob, signal: AbortSignal | undefined): Promise<number> {
    if (closed) return Promise.reject(Errors.draining());
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (running < threads) return execute(job, signal);
    if (waiting.size >= maxQueue) {
      return Promise.reject(Errors.overloaded('The token counter is busy; retry shortly.', { headers: { 'retry-after': '1' } }));
    }
    return new Promise<number>((resolve, reject) => {
      const entry: Waiting = {
        job,
        signal,
        resolve,
        reject,
        onAbort() {
          waiting.delete(entry);
          reject(signal?.reason);
        },
      };
      waiting.add(entry);
      signal?.addEventListener('abort', entry.onAbort, { once: true });
    });
  }

  function count(job: CountJob, signal: AbortSignal | undefined): Promise<number> {
    return charsOf(job) < inlineBelowChars ? countJob(job) : submit(job, signal);
  }

  return {
    async countPrompt(route: ModelRoute, body: Record<string, unknown>, signal?: AbortSignal): Promise<number> {
      const { texts, fixed } = promptParts(route, body);
      const model = typeof body.model === 'string' ? body.model : '';
      return count({ encoding: encodingForModel(model), texts, fixed }, signal);
    },
    async countText(text: string, model: string, signal?: AbortSignal): Promise<number> {
      return count({ encoding: encodingForModel(model), texts: text.length > 0 ? [text] : [], fixed: 0 }, signal);
    },
    get stats(): TokenCounterStats {
      return { poolStarted: pool !== undefined, running, queued: waiting.size };
    },
    async close(): Promise<void> {
      closed = true;
      for (const entry of waiting) {
        entry.signal?.removeEventListener('abort', entry.onAbort);
        entry.reject(Errors.draining());
      }
      waiting.clear();
      const started = pool;
      pool = undefined;
      await started?.destroy();
    },
  };
}
