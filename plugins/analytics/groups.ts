/**
 * The group lists of admin-api.md §16: requests (and cost) per user, per model and per value of
 * one metadata key, over the range, most requests first, in the list envelope. Ours besides:
 * guardrail verdicts per check and phase, most failures first, with the requests denied.
 *
 * Per the reference, `/groups/users` and `/groups/ai-models` give `requests` and `cost` as
 * strings. `/groups/metadata/{key}` gives `avg_weighted_feedback` and `requests_with_feedback`
 * as null: feedback is attached to a trace, and rollups do not remember which trace carried which
 * metadata.
 */
import { S } from '../../core/index.js';
import { metadataPairs, type Bucket, type BucketKey, type UserCounts } from './bucket.js';
import { PHASES, SLOTS, VERDICTS, type Phase } from './guardrail-counts.js';
import { cents, round3 } from './graphs.js';
import type { Visit } from './query.js';

export interface Page {
  current_page: number;
  page_size: number;
}

export interface GroupList<T> {
  object: 'list';
  total: number;
  data: T[];
}

const group = (fields: Record<string, S.JsonSchema>): S.JsonSchema => S.listOf(S.record({ ...fields, object: { type: 'string', const: 'analytics-group' } }));

export const groupSchemas = {
  users: group({ user: S.str, requests: S.str, cost: S.str }),
  models: group({ ai_model: S.str, requests: S.str }),
  metadata: group({
    metadata_value: S.str,
    requests: S.int,
    cost: S.num,
    avg_tokens: S.num,
    avg_weighted_feedback: S.nullable(S.num),
    requests_with_feedback: S.nullable(S.int),
    last_seen: S.str,
  }),
  guardrails: S.record({
    object: { type: 'string', const: 'list' },
    total: { ...S.int, description: 'Rows: distinct (check, phase) pairs that ran in the range.' },
    denied: { ...S.int, description: 'Requests a guardrail denied (446, or a stream ended by a deny).' },
    data: {
      type: 'array',
      items: S.record({
        check: { ...S.str, description: 'Check id, e.g. `default.pii`.' },
        phase: { type: 'string', enum: [...PHASES], description: '`input`: on the request (before_request_hooks); `output`: on the answer (after_request_hooks).' },
        pass: S.int,
        fail: S.int,
        error: { ...S.int, description: 'Results whose check threw or timed out (not counted in pass or fail).' },
        object: { type: 'string', const: 'analytics-group' },
      }),
    },
  }),
};

function page<R, V>(rows: Map<string, R>, requests: (r: R) => number, view: (name: string, r: R) => V, p: Page): GroupList<V> {
  const sorted = [...rows].sort((a, b) => requests(b[1]) - requests(a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const start = p.current_page * p.page_size;
  return { object: 'list', total: sorted.length, data: sorted.slice(start, start + p.page_size).map(([name, r]) => view(name, r)) };
}

/** Calls a visitor with every bucket (or every bucket's users) of the query. */
type Scan<V = Bucket> = (visit: Visit<V>) => void;

export function usersGroup(scan: Scan<UserCounts>, p: Page): GroupList<{ user: string; requests: string; cost: string; object: 'analytics-group' }> {
  const rows = new Map<string, { requests: number; cost: number }>();
  scan((users) => {
    for (let i = 0; i < users.names.length; i++) {
      const row = rows.get(users.names[i]!);
      if (row === undefined) rows.set(users.names[i]!, { requests: users.requests[i]!, cost: users.cost[i]! });
      else {
        row.requests += users.requests[i]!;
        row.cost += users.cost[i]!;
      }
    }
  });
  return page(rows, (r) => r.requests, (user, r) => ({ user, requests: String(r.requests), cost: String(cents(r.cost)), object: 'analytics-group' as const }), p);
}

export function modelsGroup(scan: Scan, p: Page): GroupList<{ ai_model: string; requests: string; object: 'analytics-group' }> {
  const rows = new Map<string, number>();
  scan((bucket, key) => {
    if (key[3] !== '') rows.set(key[3], (rows.get(key[3]) ?? 0) + bucket.requests);
  });
  return page(rows, (n) => n, (ai_model, n) => ({ ai_model, requests: String(n), object: 'analytics-group' as const }), p);
}

interface MetadataRow {
  requests: number;
  cost: number;
  tokens: number;
  last_at: number;
}

export function metadataGroup(scan: Scan, metadataKey: string, p: Page): GroupList<Record<string, unknown>> {
  const rows = new Map<string, MetadataRow>();
  // One parse per distinct metadata dimension, not per bucket.
  const valueOf = new Map<string, string | null>();
  scan((bucket: Bucket, key: BucketKey) => {
    let value = valueOf.get(key[7]);
    if (value === undefined) {
      value = metadataPairs(key[7]).find(([k]) => k === metadataKey)?.[1] ?? null;
      valueOf.set(key[7], value);
    }
    if (value === null) return;
    let row = rows.get(value);
    if (row === undefined) rows.set(value, (row = { requests: 0, cost: 0, tokens: 0, last_at: 0 }));
    row.requests += bucket.requests;
    row.cost += bucket.cost;
    row.tokens += bucket.prompt_tokens + bucket.completion_tokens;
    if (bucket.last_at > row.last_at) row.last_at = bucket.last_at;
  });
  return page(
    rows,
    (r) => r.requests,
    (metadata_value, r) => ({
      metadata_value,
      requests: r.requests,
      cost: cents(r.cost),
      avg_tokens: r.requests === 0 ? 0 : round3(r.tokens / r.requests),
      avg_weighted_feedback: null,
      requests_with_feedback: null,
      last_seen: new Date(r.last_at).toISOString(),
      object: 'analytics-group',
    }),
    p,
  );
}

interface GuardrailRow {
  check: string;
  phase: Phase;
  /** pass, fail, error */
  counts: [number, number, number];
}

export type GuardrailsGroup = GroupList<{ check: string; phase: Phase; pass: number; fail: number; error: number; object: 'analytics-group' }> & { denied: number };

/**
 * Check results per check and phase (most failures and errors first), and the requests denied.
 * Buckets without guardrails are skipped at the cost of one property read.
 */
export function guardrailsGroup(scan: Scan, p: Page): GuardrailsGroup {
  const rows = new Map<string, GuardrailRow>();
  let denied = 0;
  scan((bucket) => {
    const g = bucket.guardrails;
    if (g === undefined) return;
    denied += g.denied;
    for (let i = 0; i < g.checks.length; i++) {
      for (let ph = 0; ph < PHASES.length; ph++) {
        const at = i * SLOTS + ph * VERDICTS.length;
        if (g.counts[at]! + g.counts[at + 1]! + g.counts[at + 2]! === 0) continue;
        // `check phase`: the name ties break on, so a check's input row comes before its output row.
        const name = `${g.checks[i]!} ${PHASES[ph]!}`;
        let row = rows.get(name);
        if (row === undefined) rows.set(name, (row = { check: g.checks[i]!, phase: PHASES[ph]!, counts: [0, 0, 0] }));
        for (let v = 0; v < VERDICTS.length; v++) row.counts[v]! += g.counts[at + v]!;
      }
    }
  });
  const list = page(
    rows,
    (r) => r.counts[1] + r.counts[2],
    (_name, r) => ({ check: r.check, phase: r.phase, pass: r.counts[0], fail: r.counts[1], error: r.counts[2], object: 'analytics-group' as const }),
    p,
  );
  return { ...list, denied };
}
