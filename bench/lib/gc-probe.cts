/**
 * Preloaded into a gateway by the soak scenario (`node --require …/gc-probe.cjs`: CommonJS,
 * because Node 20 runs `--require` preloads in worker threads too and `--import` ones only in the main one): on SIGUSR2, every
 * thread of the process runs a full garbage collection, and the memory left is written out. That
 * is the memory the process holds on to; a reading taken at any other moment also counts garbage
 * not yet collected, which on a loaded gateway swings by tens of MB with the collector's phase.
 *
 *   GC_PROBE_OUT   where each reading goes (JSON, replaced whole: see {@link ProbeReading})
 *
 *   soak ──SIGUSR2──▶ main thread ──"collect"──▶ worker threads (BroadcastChannel)
 *                         │       ◀──heap after gc──┘
 *                         └─ gc on its own heap, then /proc/self/status ──▶ GC_PROBE_OUT
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';

export interface ThreadHeap {
  threadId: number;
  /** Bytes in use on the thread's JS heap after its collection, and committed for it. */
  usedBytes: number;
  totalBytes: number;
  /** Of the committed bytes, those resident (the heap's share of RssAnon). */
  physicalBytes: number;
  /** The young generation's committed size: V8 grows it under load and keeps it after a collection. */
  youngBytes: number;
}

export interface ProbeReading {
  /** Counts the signals answered, so the reader can tell a new reading from the last. */
  seq: number;
  main: ThreadHeap;
  externalBytes: number;
  workers: ThreadHeap[];
  /** The process's own resident memory (RssAnon) after every thread collected. */
  rssAnonKb: number;
}

const CHANNEL = 'gateway-bench-gc-probe';
/** How long the main thread waits for the workers' answers (a worker busy with a batch answers late). */
const WORKER_WAIT_MS = 1000;

type Message = { type: 'collect'; seq: number } | { type: 'heap'; seq: number; heap: ThreadHeap };

function heap(): ThreadHeap {
  const h = getHeapStatistics();
  const young = getHeapSpaceStatistics().filter((s) => s.space_name === 'new_space' || s.space_name === 'new_large_object_space');
  return {
    threadId,
    usedBytes: h.used_heap_size,
    totalBytes: h.total_heap_size,
    physicalBytes: h.total_physical_size,
    youngBytes: young.reduce((n, s) => n + s.space_size, 0),
  };
}

const out = process.env.GC_PROBE_OUT;
if (out !== undefined) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  if (!isMainThread) {
    channel.onmessage = (event) => {
      const m = (event as { data: Message }).data;
      if (m.type !== 'collect') return;
      gc();
      channel.postMessage({ type: 'heap', seq: m.seq, heap: heap() } satisfies Message);
    };
  } else {
    let seq = 0;
    let workers: ThreadHeap[] = [];
    channel.onmessage = (event) => {
      const m = (event as { data: Message }).data;
      if (m.type === 'heap' && m.seq === seq) workers.push(m.heap);
    };
    process.on('SIGUSR2', () => {
      seq++;
      workers = [];
      channel.postMessage({ type: 'collect', seq } satisfies Message);
      setTimeout(() => {
        gc();
        const status = readFileSync('/proc/self/status', 'utf8');
        const rssAnonKb = Number.parseInt(/^RssAnon:\s+(\d+) kB/m.exec(status)?.[1] ?? 'NaN', 10);
        const reading: ProbeReading = { seq, main: heap(), externalBytes: process.memoryUsage().external, workers, rssAnonKb };
        writeFileSync(`${out}.tmp`, JSON.stringify(reading));
        renameSync(`${out}.tmp`, out);
      }, WORKER_WAIT_MS).unref();
    });
  }
}
