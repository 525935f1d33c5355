/**
 * The semantic vectors of distributed mode: every host keeps its index in memory (searching it is
 * the hot path) and feeds it from one Valkey stream that every host appends to.
 *
 *   store on host A ──▶ A's index at once
 *                  └──▶ XADD <prefix>cache:vectors MAXLEN ~ max_vectors  {p: partition, k: entry key,
 *                                                                          c: created, x: expires at,
 *                                                                          h: host, v: float32 bytes}
 *   every host ── XREAD BLOCK on its own connection ──▶ its index (within milliseconds)
 *
 * A stream rather than pub/sub because a host that starts, or reconnects after an outage, reads
 * what it missed from where it stopped (the stream is bounded by `max_vectors`). Each vector
 * carries the expiry of its entry: a sweep drops expired vectors on every host, and a lookup
 * confirms the entry in Valkey before it answers, so an entry that is gone never hits.
 *
 * The partition id is a hash over the workspace, route, target, model, namespace and the rest of
 * the body, exactly as in embedded mode: a workspace never searches another's vectors, and the
 * entry behind a match is read under the asking workspace's own Valkey key.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Distributed, Logger, Outage } from '../../core/index.js';
import type { SemanticIndex } from './semantic-index.js';

/** Records read per XREAD. */
const READ_BATCH = 1000;
/** How long one XREAD waits for new records before asking again (also bounds how long close() waits). */
const BLOCK_MS = 2000;
/** How often expired vectors are swept from memory. */
const SWEEP_MS = 5000;

export class VectorFeed {
  readonly #redis: Redis;
  readonly #index: SemanticIndex;
  readonly #stream: string;
  readonly #maxLen: number;
  readonly #outage: Outage;
  readonly #log: Logger;
  readonly #host = randomUUID();
  readonly #distributed: Distributed;
  #reader: Redis | undefined;
  #lastId = '0-0';
  #closed = false;
  #loop: Promise<void> | undefined;
  #sweep: NodeJS.Timeout | undefined;

  constructor(distributed: Distributed, index: SemanticIndex, maxVectors: number, outage: Outage, log: Logger) {
    this.#distributed = distributed;
    this.#redis = distributed.redis;
    this.#index = index;
    this.#stream = distributed.key('cache:vectors');
    this.#maxLen = maxVectors;
    this.#outage = outage;
    this.#log = log;
  }

  /** Loads what the stream holds (the vectors other hosts stored), then follows it in the background. */
  async start(): Promise<void> {
    try {
      // The backlog on the command connection, so the first requests already see it.
      for (;;) {
        const batch = await this.#redis.xrangeBuffer(this.#stream, `(${this.#lastId}`, '+', 'COUNT', READ_BATCH);
        for (const [id, fields] of batch) this.#apply(id.toString(), fields);
        if (batch.length < READ_BATCH) break;
      }
    } catch (err) {
      this.#outage.fault(err);
    }
    this.#reader = this.#distributed.subscriber();
    this.#loop = this.#follow(this.#reader);
    this.#sweep = setInterval(() => this.#index.dropExpired(Date.now()), SWEEP_MS);
    this.#sweep.unref();
  }

  /** Appends a vector this host stored, for every other host; in the background. */
  publish(pid: string, key: string, created: number, expires: number, vector: Float32Array): void {
    if (this.#closed) return;
    if (!this.#outage.attempt()) return this.#outage.skipped();
    const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    this.#redis
      .xadd(this.#stream, 'MAXLEN', '~', this.#maxLen, '*', 'p', pid, 'k', key, 'c', created, 'x', expires, 'h', this.#host, 'v', bytes)
      .then(
        () => this.#outage.ok(),
        (err: unknown) => this.#outage.fault(err),
      );
  }

  async #follow(reader: Redis): Promise<void> {
    while (!this.#closed) {
      try {
        // The reader queues while Valkey is away and resends on reconnect, from the last id seen.
        const answer = await reader.xreadBuffer('COUNT', READ_BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', this.#stream, this.#lastId);
        if (answer === null) continue;
        for (const [, records] of answer) for (const [id, fields] of records) this.#apply(id.toString(), fields);
      } catch (err) {
        if (this.#closed) return;
        // The reader is not on the request path: no fault to count here, just do not spin.
        this.#log.debug('cache vector feed read failed', { error: (err as Error).message });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  /** One stream record into the index (records this host wrote are already there). */
  #apply(id: string, fields: Buffer[]): void {
    this.#lastId = id;
    const f = new Map<string, Buffer>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!.toString(), fields[i + 1]!);
    if (f.get('h')?.toString() === this.#host) return;
    const pid = f.get('p')?.toString();
    const key = f.get('k')?.toString();
    const created = Number(f.get('c')?.toString());
    const expires = Number(f.get('x')?.toString());
    const raw = f.get('v');
    if (pid === undefined || key === undefined || raw === undefined || !Number.isFinite(created) || !(expires > Date.now())) return;
    if (raw.byteLength === 0 || raw.byteLength % 4 !== 0) return;
    // A copy: Float32Array needs 4-byte alignment, which a slice of the reply buffer may lack.
    const vector = new Float32Array(new Uint8Array(raw).buffer);
    this.#index.add(pid, key, created, vector, expires);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sweep !== undefined) clearInterval(this.#sweep);
    this.#reader?.disconnect();
    await this.#loop;
  }
}
