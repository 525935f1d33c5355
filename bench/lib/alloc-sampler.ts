/**
 * Preloaded into a gateway by bench/alloc.sh (`node --import …/alloc-sampler.js`): V8's sampling
 * heap profiler over one window, counting every allocation, the ones already collected included
 * (by default it keeps only what is still alive), and the HTTP requests served in the same window.
 *
 *   ALLOC_OUT       where the result goes (JSON: { requests, ms, profile })
 *   ALLOC_START_MS  when the window opens, after the process started (default 6000: past warm-up)
 *   ALLOC_MS        how long it stays open (default 8000)
 *
 * Only the main thread is sampled: the log thread's allocations are its own heap's business.
 */
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { isMainThread } from 'node:worker_threads';

/** Bytes between samples: small enough for a few hundred samples per second of load. */
const SAMPLING_INTERVAL = 4096;

function post<T>(session: Session, method: string, params: object = {}): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))));
}

const out = process.env.ALLOC_OUT;
if (isMainThread && out !== undefined) {
  const session = new Session();
  session.connect();
  let requests = 0;
  let counting = false;
  subscribe('http.server.request.start', () => {
    if (counting) requests++;
  });
  setTimeout(() => {
    void post(session, 'HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    }).then(() => {
      counting = true;
      const opened = performance.now();
      setTimeout(() => {
        counting = false;
        const ms = performance.now() - opened;
        void post<{ profile: unknown }>(session, 'HeapProfiler.stopSampling').then(({ profile }) => writeFileSync(out, JSON.stringify({ requests, ms, profile })));
      }, Number(process.env.ALLOC_MS ?? 8000)).unref();
    });
  }, Number(process.env.ALLOC_START_MS ?? 6000)).unref();
}
