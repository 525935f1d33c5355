/**
 * Batches spans and POSTs them to the collector, off the request path.
 *
 *   onDone ─▶ push ─▶ queue (bounded: full → the span is dropped and counted)
 *                       │ every flush_ms, or at batch_size spans
 *                       ▼
 *                     one export in flight at a time ─▶ POST endpoint (timeout_ms)
 *
 * A slow or dead collector never slows traffic: the queue fills, spans are dropped, a warning is
 * logged at most once a minute. Failed batches are not retried (tracing is best effort, and a
 * retry backlog is the memory a dead collector would take). `close()` flushes what waits,
 * bounded by one `timeout_ms` overall.
 */
import type { Logger } from '../../core/index.js';
import { exportRequest, type KeyValue, type OtlpSpan } from './otlp.js';

export interface ExporterOptions {
  endpoint: string;
  headers: Record<string, string>;
  resource: KeyValue[];
  scope: { name: string; version: string };
  flushMs: number;
  batchSize: number;
  maxQueue: number;
  timeoutMs: number;
  log: Logger;
}

export interface ExporterStats {
  exported: number;
  dropped: number;
  failed: number;
}

export interface SpanExporter {
  push(span: OtlpSpan): void;
  /** Sends what waits now (tests; `close`). Resolves when the queue is empty or the export failed. */
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly stats: Readonly<ExporterStats>;
}

const WARN_EVERY_MS = 60_000;

export function createExporter(o: ExporterOptions): SpanExporter {
  let queue: OtlpSpan[] = [];
  let inflight: Promise<void> | undefined;
  let closed = false;
  const stats: ExporterStats = { exported: 0, dropped: 0, failed: 0 };
  const lastWarn = { drop: 0, fail: 0 };
  const headers = { ...o.headers, 'content-type': 'application/json' };

  function warn(kind: 'drop' | 'fail', message: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    if (now - lastWarn[kind] < WARN_EVERY_MS) return;
    lastWarn[kind] = now;
    o.log.warn(message, { ...fields, dropped: stats.dropped, failed: stats.failed });
  }

  async function send(batch: OtlpSpan[]): Promise<void> {
    try {
      // undici's index loads with the first export, not at every start (core/upstream/undici.ts).
      const { request } = await import('undici');
      const res = await request(o.endpoint, {
        method: 'POST',
        headers,
        body: exportRequest(o.resource, o.scope, batch),
        signal: AbortSignal.timeout(o.timeoutMs),
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) stats.exported += batch.length;
      else {
        stats.failed += batch.length;
        warn('fail', 'trace export refused', { status: res.statusCode, spans: batch.length });
      }
    } catch (err) {
      stats.failed += batch.length;
      warn('fail', 'trace export failed', { error: (err as Error).message, spans: batch.length });
    }
  }

  /** Starts one export of up to batch_size spans, unless one is in flight; returns it. */
  function flush(): Promise<void> {
    if (inflight !== undefined) return inflight;
    if (queue.length === 0) return Promise.resolve();
    const batch = queue.length <= o.batchSize ? queue : queue.slice(0, o.batchSize);
    queue = queue.length <= o.batchSize ? [] : queue.slice(o.batchSize);
    inflight = send(batch).finally(() => {
      inflight = undefined;
      // Spans that piled up while this export ran go at once, not at the next tick.
      if (!closed && queue.length >= o.batchSize) void flush();
    });
    return inflight;
  }

  const timer = setInterval(flush, o.flushMs);
  timer.unref();

  return {
    push(span) {
      if (closed) {
        stats.dropped++; // a request that outlived its retired pipeline
        return;
      }
      if (queue.length >= o.maxQueue) {
        stats.dropped++;
        warn('drop', 'trace queue full: spans dropped', { queued: queue.length });
        return;
      }
      queue.push(span);
      if (queue.length >= o.batchSize) void flush();
    },
    async flush() {
      while (queue.length > 0 || inflight !== undefined) await flush();
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      let timeout: NodeJS.Timeout | undefined;
      let expired = false;
      const deadline = new Promise<void>((resolve) => {
        timeout = setTimeout(() => {
          expired = true;
          resolve();
        }, o.timeoutMs);
      });
      const drain = async (): Promise<void> => {
        while (!expired && (queue.length > 0 || inflight !== undefined)) await flush();
      };
      await Promise.race([drain(), deadline]);
      clearTimeout(timeout);
      if (queue.length > 0) {
        stats.dropped += queue.length;
        o.log.warn('trace export unfinished at shutdown: spans dropped', { spans: queue.length });
        queue = [];
      }
    },
    get stats() {
      return stats;
    },
  };
}
