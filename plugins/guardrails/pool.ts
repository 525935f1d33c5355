/**
 * Built-in checks on large texts run on a worker pool, so a 1 MB prompt scanned for PII does not
 * stall every other request on the event loop.
 *
 *   text < threshold (option `worker_threshold`, 64 KB) ──▶ the check on the main thread
 *   otherwise, a built-in check that needs no network ──▶ piscina (started on first use)
 *   queue full (option `worker_max_queue`) ──▶ the check's result is an error (fails closed)
 *
 * Plugins' own checks always run on the main thread: their code is not known to the workers.
 */
import { Piscina } from 'piscina';
import type { CheckContext, CheckResult, Finding } from '../../core/index.js';
import type { BoundCheck } from './registry.js';
import type { PoolTask } from './checks.worker.js';

const WORKER_FILE = new URL('./checks.worker.js', import.meta.url).href;

export interface CheckPool {
  /** Text length (UTF-16 units) from which a poolable check goes to the pool. */
  readonly threshold: number;
  poolable(check: BoundCheck): boolean;
  find(check: BoundCheck, text: string): Promise<Finding[] | null>;
  run(check: BoundCheck, ctx: Omit<CheckContext, 'text' | 'signal'>, text: string): Promise<CheckResult>;
  /** Tasks the workers finished (0 while the pool was never needed). */
  completed(): number;
  close(): Promise<void>;
}

export function createCheckPool(options: { threshold: number; threads: number; maxQueue: number; builtin: ReadonlySet<string> }): CheckPool {
  let pool: Piscina<PoolTask, unknown> | undefined;
  const start = (): Piscina<PoolTask, unknown> =>
    (pool ??= new Piscina<PoolTask, unknown>({ filename: WORKER_FILE, minThreads: 1, maxThreads: options.threads, maxQueue: options.maxQueue, idleTimeout: 60_000 }));
  return {
    threshold: options.threshold,
    poolable: (check) => options.builtin.has(check.id) && check.def.id !== 'default.webhook',
    find: (check, text) => start().run({ op: 'find', id: check.id, params: check.params, text }) as Promise<Finding[] | null>,
    run: (check, ctx, text) => {
      const { request, response, route, model, provider, metadata, phase } = ctx;
      return start().run({ op: 'run', id: check.id, params: check.params, text, ctx: { request, response, route, model, provider, metadata, phase } }) as Promise<CheckResult>;
    },
    completed: () => pool?.completed ?? 0,
    async close() {
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
}
