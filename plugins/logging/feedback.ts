/**
 * Feedback on a traced request (admin-api.md §19): a score from −10 to 10 with a weight, kept in
 * the `feedback` database (the analytics plugin reads it there by trace_id and workspace).
 *
 *   POST /v1/feedback       {trace_id*, value*, weight = 1, metadata}  → {status, message, feedback_ids}
 *   PUT  /v1/feedback/:id   the same body (an omitted weight or metadata is kept) → the same shape
 *
 * Workspace keys only (the spec's permission table): feedback belongs to a workspace's traces.
 */
import type { Database } from 'lmdb';
import { adminRoutes, assertVisible, defineAdminRoute, nowIso, S, uuidv7, type FeedbackEntry, type GatewayApp, type RouteDefinition, type Store } from '../../core/index.js';
import { LoggingErrors } from './errors.js';
import { scan } from './scan.js';
import type { FeedbackStore } from './backend.js';

/**
 * One feedback, as stored in the `feedback` database (key: id, a UUIDv7): the entry the core's
 * feedback contract describes (the weighted score is value × weight), with its id and times.
 */
export interface FeedbackRecord extends FeedbackEntry {
  id: string;
  created_at: string;
  last_updated_at: string;
}

export const FEEDBACK_DB = 'feedback';

export type FeedbackDb = Database<FeedbackRecord, string>;

export function openFeedbackDb(store: Store): FeedbackDb {
  return store.root.openDB<FeedbackRecord, string>({ name: FEEDBACK_DB });
}

interface FeedbackBody {
  trace_id: string;
  value: number;
  weight: number;
  metadata?: Record<string, unknown>;
}

const properties = {
  trace_id: { type: 'string', minLength: 1, maxLength: 128 },
  value: { type: 'integer', minimum: -10, maximum: 10 },
  weight: { type: 'number', minimum: 0, maximum: 1, default: 1 },
  metadata: { type: 'object', maxProperties: 64 },
};

/** An update keeps the stored weight when none is sent (no default). */
const updateProperties = { ...properties, weight: { type: 'number', minimum: 0, maximum: 1 } };

const answer = S.record({ status: S.str, message: S.str, feedback_ids: S.strings });

export function feedbackRoutes(app: GatewayApp, db: FeedbackStore): RouteDefinition[] {
  return adminRoutes(app, [
    defineAdminRoute<FeedbackBody>({
      method: 'POST',
      path: '/v1/feedback',
      // Apps call it at volume and it writes no control-plane record: not serialized across hosts.
      writeScope: false,
      summary: 'Add feedback to a trace',
      resource: 'feedback',
      action: 'create',
      scope: 'feedback.write',
      level: 'workspace',
      body: { type: 'object', properties, required: ['trace_id', 'value'], additionalProperties: false },
      response: answer,
      async handler({ body, principal }) {
        if (principal.workspace_id === null) throw LoggingErrors.feedbackKeyKind();
        const now = nowIso();
        const record: FeedbackRecord = {
          id: uuidv7(),
          trace_id: body.trace_id,
          value: body.value,
          weight: body.weight,
          metadata: body.metadata ?? {},
          workspace_id: principal.workspace_id,
          organisation_id: principal.organisation_id,
          api_key_id: principal.key_id,
          created_at: now,
          last_updated_at: now,
        };
        await db.put(record);
        return { status: 'success', message: 'Feedback saved.', feedback_ids: [record.id] };
      },
    }),
    defineAdminRoute<{ trace_id?: string; value: number; weight?: number; metadata?: Record<string, unknown> }>({
      method: 'PUT',
      path: '/v1/feedback/:id',
      // Apps call it at volume and it writes no control-plane record: not serialized across hosts.
      writeScope: false,
      summary: 'Update a feedback',
      resource: 'feedback',
      action: 'update',
      scope: 'feedback.write',
      level: 'workspace',
      body: { type: 'object', properties: updateProperties, required: ['value'], additionalProperties: false },
      response: answer,
      async handler({ params, body, principal }) {
        if (principal.workspace_id === null) throw LoggingErrors.feedbackKeyKind();
        const id = params.id!;
        const current = assertVisible(principal, await db.get(id), 'Feedback');
        const next: FeedbackRecord = {
          ...current,
          trace_id: body.trace_id ?? current.trace_id,
          value: body.value,
          weight: body.weight ?? current.weight,
          metadata: body.metadata ?? current.metadata,
          last_updated_at: nowIso(),
        };
        await db.put(next);
        return { status: 'success', message: 'Feedback updated.', feedback_ids: [id] };
      },
    }),
  ]);
}

/**
 * The weighted feedback of each trace (the mean of value × weight), for the export filters
 * `weighted_feedback_min/max`. A full scan, cooperative; exports are rare.
 */
export async function weightedFeedbackByTrace(db: FeedbackDb, workspaceId: string | null): Promise<Map<string, number>> {
  const sums = new Map<string, { sum: number; n: number }>();
  for await (const chunk of scan(db, { newestFirst: false })) {
    for (const f of chunk) {
      if (workspaceId !== null && f.workspace_id !== workspaceId) continue;
      const s = sums.get(f.trace_id) ?? { sum: 0, n: 0 };
      s.sum += f.value * f.weight;
      s.n++;
      sums.set(f.trace_id, s);
    }
  }
  return new Map([...sums].map(([trace, s]) => [trace, s.sum / s.n]));
}
