/**
 * `server.workers > 1`: one primary process supervising N worker processes that share the port.
 *
 *   primary ──fork──▶ worker 1 … worker N      each runs the whole gateway (listener + pipeline)
 *      │  SIGTERM/SIGINT ─▶ every worker drains, then the primary exits 0
 *      │  SIGHUP         ─▶ every worker reloads the config file
 *      └─ a worker that dies unexpectedly is replaced (at most once per second)
 *
 * Node's cluster module hands connections to the workers (round robin), so one worker's slow
 * request never blocks another's. State shared across workers (rate counters, caches) lives in the
 * LMDB data dir, which all of them open.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from './logger.js';

export interface ReadyMessage {
  type: 'gateway:ready';
  url: string;
}

function isReady(msg: unknown): msg is ReadyMessage {
  return typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === 'gateway:ready';
}

/** Runs in the primary: forks the workers and supervises them until a stop signal. */
export function superviseWorkers(count: number, log: Logger, onAllReady: (url: string) => void): void {
  let stopping = false;
  let announced = false;
  const ready = new Set<number>();
  let lastRestart = 0;

  const fork = (): Worker => {
    const worker = cluster.fork();
    worker.on('message', (msg: unknown) => {
      if (!isReady(msg)) return;
      ready.add(worker.id);
      if (!announced && ready.size >= count) {
        announced = true;
        onAllReady(msg.url);
      }
    });
    return worker;
  };

  for (let i = 0; i < count; i++) fork();

  cluster.on('exit', (worker, code, signal) => {
    ready.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log.info('all workers stopped');
        process.exit(0);
      }
      return;
    }
    log.error('worker died; starting a new one', { pid: worker.process.pid, code, signal });
    // Bounded restarts: a worker that dies at boot (bad plugin) must not spin the CPU.
    const wait = Math.max(0, 1000 - (Date.now() - lastRestart));
    lastRestart = Date.now() + wait;
    setTimeout(fork, wait).unref();
  });

  const broadcast = (signal: NodeJS.Signals): void => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn('second signal: exiting now', { signal });
      broadcast('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    log.info('stopping workers', { signal });
    broadcast('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => broadcast('SIGHUP'));
}

/** In a worker: tells the primary this worker is listening. */
export function announceReady(url: string): void {
  if (cluster.isWorker && process.send) process.send({ type: 'gateway:ready', url } satisfies ReadyMessage);
}

export const isPrimary = (): boolean => cluster.isPrimary;
