/**
 * Node's process metrics (event-loop delay as `nodejs_eventloop_lag_*`, heap, GC, CPU, handles),
 * from prom-client's `collectDefaultMetrics`, in a registry of their own made once per process.
 *
 * Once, because `collectDefaultMetrics` starts an event-loop delay monitor and a GC observer that
 * it never stops: made per pipeline, every reload would leak one of each. These describe the
 * process, not the pipeline, so every pipeline's `/metrics` shows the same ones.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

let registry: Registry | undefined;

export function processRegistry(): Registry {
  if (registry === undefined) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
