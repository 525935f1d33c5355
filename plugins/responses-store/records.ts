/**
 * Kept responses, behind one small interface with two drivers:
 *
 * - embedded mode, the store's LMDB env (databases of this plugin, like the cache's):
 *     responses_store           id                    → record {workspace_id, input items, response, expires_at}
 *     responses_store#expiry    [expires_at, id]      → 1      (retention sweeps walk it oldest first)
 * - distributed mode, PostgreSQL (pg-records.ts), shared by every host: a conversation started
 *   on one host continues on any other.
 *
 * Writes are not awaited on the hot path; until one commits, the record is kept in memory too
 * (`pending`), so a client that continues a conversation the moment the previous answer arrived
 * finds it on this host.
 */
import type { Database } from 'lmdb';
import type { Store } from '../../core/index.js';
import { ResponsesStoreErrors } from './errors.js';

type Json = Record<string, unknown>;

export interface KeptResponse {
  id: string;
  workspace_id: string;
  previous_response_id: string | null;
  /** The call's own input items (not the conversation before it), as `input_items` lists them. */
  input: Json[];
  /** The response object as the client got it. */
  response: Json;
  /**
   * The provider that made it natively (OpenAI, Azure), which keeps it too under the same id;
   * absent or null for a response the gateway translated (kept only here).
   */
  native_provider?: string | null;
  /** Epoch milliseconds. */
  expires_at: number;
  /** The record's JSON size when kept: conversations are bounded by the sum (see {@link conversation}). */
  bytes: number;
}

type ExpiryKey = [number, string];
type MaybePromise<T> = T | Promise<T>;

/** A conversation is followed back at most this far: a bound on the work one request can cause. */
const MAX_CHAIN = 1000;
/** Records removed per sweep step, so a sweep never holds the event loop for long. */
export const SWEEP_BATCH = 500;

/** What the plugin needs of a driver. */
export interface KeptResponses {
  /** The record, when it exists and has not expired, whichever workspace kept it. */
  find(id: string): MaybePromise<KeptResponse | undefined>;
  /** Keeps a record (not awaited: a failure is logged by the driver, the answer is already out). */
  put(record: KeptResponse): void;
  delete(record: KeptResponse): MaybePromise<void>;
  /** Removes up to one batch of expired records; the number removed. */
  sweep(): Promise<number>;
}

/** The record, when it exists, belongs to `workspace` and has not expired. */
async function keptFor(records: KeptResponses, id: string, workspace: string): Promise<KeptResponse | undefined> {
  const record = await records.find(id);
  return record?.workspace_id === workspace ? record : undefined;
}

/**
 * Every input and output item of the conversation that ends with `id`, oldest first, and the
 * record `id` names; undefined when `id` is not held for `workspace`. A link that expired ends the
 * chain there (what is left is still a coherent, shorter conversation).
 */
export async function conversation(
  records: KeptResponses,
  id: string,
  workspace: string,
  maxBytes: number,
): Promise<{ items: Json[]; last: KeptResponse } | undefined> {
  const chain: KeptResponse[] = [];
  let next: string | null = id;
  let bytes = 0;
  while (next !== null && chain.length < MAX_CHAIN) {
    const record = await keptFor(records, next, workspace);
    if (record === undefined) break;
    bytes += record.bytes ?? 0;
    // Cutting the oldest turns would change what the model is told without saying so: refuse.
    if (bytes > maxBytes) throw ResponsesStoreErrors.conversationTooLarge(undefined, { param: 'previous_response_id' });
    chain.push(record);
    next = record.previous_response_id;
  }
  const last = chain[0];
  if (last === undefined) return undefined;
  return { items: chain.reverse().flatMap((r) => [...r.input, ...(Array.isArray(r.response.output) ? (r.response.output as Json[]) : [])]), last };
}


/** The embedded driver: this host's LMDB env. */
export class ResponseRecords implements KeptResponses {
  readonly #db: Database<KeptResponse, string>;
  readonly #expiry: Database<1, ExpiryKey>;
  readonly #pending = new Map<string, KeptResponse>();

  constructor(store: Store) {
    this.#db = store.root.openDB<KeptResponse, string>({ name: 'responses_store' });
    this.#expiry = store.root.openDB<1, ExpiryKey>({ name: 'responses_store#expiry' });
  }

  /** The record, when it exists and has not expired, whichever workspace kept it. */
  find(id: string, now = Date.now()): KeptResponse | undefined {
    // Longer ids are never ours (and must not reach LMDB's key size limit).
    if (id.length === 0 || id.length > 256) return undefined;
    const record = this.#pending.get(id) ?? this.#db.get(id);
    return record !== undefined && record.expires_at > now ? record : undefined;
  }

  put(record: KeptResponse): void {
    this.#pending.set(record.id, record);
    const written = this.#db.put(record.id, record);
    void this.#expiry.put([record.expires_at, record.id], 1).catch(() => false);
    // A failed write (disk full) leaves nothing behind but a log line by the store's guard.
    void written.catch(() => false).finally(() => {
      if (this.#pending.get(record.id) === record) this.#pending.delete(record.id);
    });
  }

  delete(record: KeptResponse): void {
    this.#pending.delete(record.id);
    this.#db.removeSync(record.id);
    this.#expiry.removeSync([record.expires_at, record.id]);
  }

  /** Removes up to one batch of expired records; the number removed. */
  async sweep(now = Date.now()): Promise<number> {
    const expired: ExpiryKey[] = [];
    for (const key of this.#expiry.getKeys({ end: [now, '\uffff'], limit: SWEEP_BATCH })) expired.push(key as ExpiryKey);
    if (expired.length === 0) return 0;
    await this.#db.transaction(() => {
      for (const key of expired) {
        const record = this.#db.get(key[1]);
        // An id kept again later (never, with random ids) keeps its newer record.
        if (record !== undefined && record.expires_at === key[0]) this.#db.remove(key[1]);
        this.#expiry.remove(key);
      }
    });
    return expired.length;
  }
}
