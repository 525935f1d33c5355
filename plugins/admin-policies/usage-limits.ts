/**
 * Usage limits policies (admin-api.md §11): a budget in cost or tokens per value of `group_by`
 * (per API key, per `metadata._user`, …) among the requests matching `conditions`. Create, list
 * (filters `workspace_id`, `status` — active when omitted — `type`; paginated), get (optionally
 * with the usage of every value key), update (PUT answers 200 `{}`), delete (archives), and the
 * per-value entities: list and reset.
 *
 * The entities (`store.c.policyUsage`, id `${policy_id}:${value_key}`) are written by the
 * `usage-limits` enforcement plugin; this file only reads them and zeroes them on request.
 * In distributed mode the spend that decides lives in Valkey (the records mirror it a flush
 * behind): reads take `current_usage` from Valkey and resets zero it there first.
 */
import { AdminErrors, assertVisible, crudRoutes, listPage, nowIso, readBudgetUsage, resetBudgetUsage, uuidv7, S, type AnyAdminRoute, type Records, type Store } from '../../core/index.js';

type Policy = Records.UsageLimitPolicy;
type Entity = Records.PolicyUsageEntity;
type PeriodicReset = Policy['periodic_reset'];

const nullableNumber: S.JsonSchema = { type: 'number', minimum: 0, nullable: true };
// ajv checks `enum` after `nullable`, so null must be listed for `null` (remove the reset) to pass.
const periodicReset: S.JsonSchema = { type: 'string', enum: ['monthly', 'weekly', null], nullable: true };

const usageSchema = S.record({ current_usage: S.num, status: S.str, is_threshold_alerts_sent: S.bool, is_exhausted_alerts_sent: S.bool });

const policyFields = {
  id: S.str,
  name: S.strOrNull,
  conditions: { type: 'array', items: S.record({ key: S.str, value: S.str }) },
  group_by: { type: 'array', items: S.record({ key: S.str }) },
  type: S.str,
  credit_limit: S.num,
  alert_threshold: { type: 'number', nullable: true },
  periodic_reset: S.strOrNull,
  next_usage_reset_at: S.strOrNull,
  last_reset_at: S.strOrNull,
  status: S.str,
  workspace_id: S.str,
  organisation_id: S.str,
  created_at: S.str,
  last_updated_at: S.str,
  object: S.str,
};
const policySchema = S.record(policyFields);
/** The single-policy read: `value_key_usage_map` only with `include_usage=true`. */
const policyWithUsageSchema = S.record(
  { ...policyFields, value_key_usage_map: { type: 'object', additionalProperties: usageSchema } },
  Object.keys(policyFields),
);

const entitySchema = S.record({ id: S.str, value_key: S.str, current_usage: S.num, status: S.str, object: S.str });

const view = (p: Policy): Policy & { object: string } => ({ ...p, object: 'policy_usage_limits' });

/**
 * When a periodic budget next starts over: the first instant of the next UTC month, or the next
 * Monday 00:00 UTC (never today, even on a Monday: the current week has already begun).
 */
export function nextUsageResetAt(periodic: PeriodicReset, now = new Date()): string | null {
  if (periodic === null) return null;
  if (periodic === 'monthly') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
  const daysToMonday = (8 - now.getUTCDay()) % 7 || 7;
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + daysToMonday)).toISOString();
}

/** An alert at or above the limit would never fire before the budget is gone. */
function checkThreshold(creditLimit: number, alertThreshold: number | null): void {
  if (alertThreshold !== null && alertThreshold >= creditLimit) {
    throw AdminErrors.invalid('alert_threshold must be less than credit_limit.', 'alert_threshold');
  }
}

/** Zeroes one entity: usage, status and alert flags, so its alerts can fire again. */
function resetEntity(store: Store, id: string): void {
  store.c.policyUsage.update(id, (e) => ({
    ...e,
    current_usage: 0,
    status: 'active',
    is_threshold_alerts_sent: false,
    is_exhausted_alerts_sent: false,
    last_updated_at: nowIso(),
  }));
}

type Usage = Pick<Entity, 'current_usage' | 'status' | 'is_threshold_alerts_sent' | 'is_exhausted_alerts_sent'>;

async function usageMap(store: Store, policyId: string): Promise<Record<string, Usage>> {
  const entities = store.c.policyUsage.list({ index: 'policy', value: policyId }).items;
  const shared = await sharedUsage(store, entities);
  const out: Record<string, Usage> = {};
  for (const e of entities) {
    out[e.value_key] = {
      current_usage: shared?.get(e.id) ?? e.current_usage,
      status: e.status,
      is_threshold_alerts_sent: e.is_threshold_alerts_sent,
      is_exhausted_alerts_sent: e.is_exhausted_alerts_sent,
    };
  }
  return out;
}

/** Distributed mode: each entity's spend as Valkey holds it (one round trip); undefined on the embedded default. */
async function sharedUsage(store: Store, entities: ReadonlyArray<Entity>): Promise<Map<string, number> | undefined> {
  const d = store.distributed;
  if (d === undefined || entities.length === 0) return undefined;
  return readBudgetUsage(d, entities.map((e) => e.id));
}

/** Distributed mode: zeroes the entity's spend in Valkey (before the record, so a fault changes nothing). */
async function resetShared(store: Store, id: string): Promise<void> {
  if (store.distributed !== undefined) await resetBudgetUsage(store.distributed, [id]);
}

interface CreateBody {
  name?: string;
  conditions: Policy['conditions'];
  group_by: Policy['group_by'];
  type: Policy['type'];
  credit_limit: number;
  alert_threshold?: number | null;
  periodic_reset?: PeriodicReset;
}

interface UpdateBody {
  name?: string;
  credit_limit?: number;
  alert_threshold?: number | null;
  periodic_reset?: PeriodicReset;
  reset_usage_for_value?: string;
}

interface ListQuery {
  status: 'active' | 'archived';
  type?: Policy['type'];
  current_page: number;
  page_size: number;
}

interface EntitiesQuery {
  status?: Entity['status'];
  search?: string;
  current_page: number;
  page_size: number;
}

const resource = 'usage_limits_policy';
const crud = crudRoutes({ path: '/v1/policies/usage-limits', key: 'id', resource, scopes: 'policies', level: 'workspace' });
const notFound = 'Usage limits policy';

export const usageLimitPolicyRoutes: AnyAdminRoute[] = [
  crud.create<CreateBody>({
    summary: 'Create a usage limits policy',
    body: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 255 },
        conditions: S.conditions,
        group_by: S.groupBy,
        type: { type: 'string', enum: ['cost', 'tokens'] },
        credit_limit: { type: 'number', minimum: 0 },
        alert_threshold: nullableNumber,
        periodic_reset: periodicReset,
        workspace_id: S.workspaceRef,
        organisation_id: { type: 'string', maxLength: 255 },
      },
      required: ['conditions', 'group_by', 'type', 'credit_limit'],
      additionalProperties: false,
    },
    response: S.record({ id: S.str, object: S.str }),
    handler({ body, workspace, principal, store }) {
      const alertThreshold = body.alert_threshold ?? null;
      checkThreshold(body.credit_limit, alertThreshold);
      const periodic = body.periodic_reset ?? null;
      const now = nowIso();
      const policy: Policy = {
        id: uuidv7(),
        name: body.name ?? null,
        conditions: body.conditions,
        group_by: body.group_by,
        type: body.type,
        credit_limit: body.credit_limit,
        alert_threshold: alertThreshold,
        // Omitted: the budget is cumulative and never starts over.
        periodic_reset: periodic,
        next_usage_reset_at: nextUsageResetAt(periodic),
        last_reset_at: null,
        status: 'active',
        workspace_id: workspace!.id,
        organisation_id: principal.organisation_id,
        created_at: now,
        last_updated_at: now,
      };
      store.c.usageLimitPolicies.insert(policy);
      return { id: policy.id, object: 'policy_usage_limits' };
    },
  }),
  crud.list<never, ListQuery>({
    summary: 'List usage limits policies',
    workspaceDefault: 'all',
    query: {
      properties: {
        workspace_id: S.workspaceRef,
        status: { type: 'string', enum: ['active', 'archived'], default: 'active' },
        type: { type: 'string', enum: ['cost', 'tokens'] },
        ...S.pagination,
      },
    },
    response: S.listOf(policySchema),
    handler({ query, workspace, store }) {
      return listPage(store.c.usageLimitPolicies, query, {
        workspace,
        filter: (p) => p.status === query.status && (query.type === undefined || p.type === query.type),
        view,
      });
    },
  }),
  crud.read<never, { status?: Policy['status']; include_usage: boolean }>({
    summary: 'Get a usage limits policy',
    query: {
      properties: {
        status: { type: 'string', enum: ['active', 'archived'] },
        include_usage: { type: 'boolean', default: false },
      },
    },
    response: policyWithUsageSchema,
    async handler({ params, query, principal, store }) {
      const policy = assertVisible(principal, store.c.usageLimitPolicies.get(params.id!), notFound);
      if (query.status !== undefined && policy.status !== query.status) throw AdminErrors.notFound(`${notFound} does not exist.`);
      return query.include_usage ? { ...view(policy), value_key_usage_map: await usageMap(store, policy.id) } : view(policy);
    },
  }),
  crud.update<UpdateBody>({
    summary: 'Update a usage limits policy',
    body: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 255 },
        credit_limit: { type: 'number', minimum: 0 },
        alert_threshold: nullableNumber,
        periodic_reset: periodicReset,
        reset_usage_for_value: { type: 'string', minLength: 1, maxLength: 1024 },
      },
      additionalProperties: false,
    },
    response: S.empty,
    async handler({ params, body, principal, store }) {
      const id = params.id!;
      assertVisible(principal, store.c.usageLimitPolicies.get(id), notFound);
      const entityId = body.reset_usage_for_value === undefined ? undefined : `${id}:${body.reset_usage_for_value}`;
      if (entityId !== undefined && store.c.policyUsage.get(entityId) === undefined) {
        throw AdminErrors.notFound('No usage is recorded for reset_usage_for_value under this policy.', 'reset_usage_for_value');
      }
      if (entityId !== undefined && store.distributed !== undefined) {
        // Checked before Valkey is touched: a rejected threshold must leave the usage as it was.
        const p = store.c.usageLimitPolicies.get(id)!;
        checkThreshold(body.credit_limit ?? p.credit_limit, body.alert_threshold !== undefined ? body.alert_threshold : p.alert_threshold);
        await resetShared(store, entityId);
      }
      // One transaction for the policy and the entity: a rejected threshold leaves the usage as it was.
      store.root.transactionSync(() => {
        store.c.usageLimitPolicies.update(id, (p) => {
          const creditLimit = body.credit_limit ?? p.credit_limit;
          const alertThreshold = body.alert_threshold !== undefined ? body.alert_threshold : p.alert_threshold;
          checkThreshold(creditLimit, alertThreshold);
          const periodicChanged = body.periodic_reset !== undefined && body.periodic_reset !== p.periodic_reset;
          const periodic = body.periodic_reset !== undefined ? body.periodic_reset : p.periodic_reset;
          return {
            ...p,
            name: body.name ?? p.name,
            credit_limit: creditLimit,
            alert_threshold: alertThreshold,
            periodic_reset: periodic,
            next_usage_reset_at: periodicChanged ? nextUsageResetAt(periodic) : p.next_usage_reset_at,
            last_updated_at: nowIso(),
          };
        });
        if (entityId !== undefined) resetEntity(store, entityId);
      });
      return {};
    },
  }),
  crud.delete({
    summary: 'Delete (archive) a usage limits policy',
    response: S.empty,
    handler({ params, principal, store }) {
      assertVisible(principal, store.c.usageLimitPolicies.get(params.id!), notFound);
      // Deleting archives: the policy stops applying; it and its usage stay for the audit trail.
      store.c.usageLimitPolicies.update(params.id!, (p) => ({ ...p, status: 'archived', last_updated_at: nowIso() }));
      return {};
    },
  }),
  crud.member<never, EntitiesQuery>({
    method: 'GET',
    path: '/entities',
    summary: 'List the value keys a usage limits policy tracks, with their usage',
    action: 'list',
    scope: 'policies.read',
    query: {
      properties: {
        status: { type: 'string', enum: ['active', 'exhausted'] },
        search: { type: 'string', maxLength: 255 },
        current_page: S.pagination.current_page,
        page_size: S.pagination.page_size,
      },
    },
    response: S.listOf(entitySchema),
    async handler({ params, query, principal, store }) {
      const policy = assertVisible(principal, store.c.usageLimitPolicies.get(params.id!), notFound);
      const search = query.search?.toLowerCase();
      const shared = store.distributed === undefined ? undefined : await sharedUsage(store, store.c.policyUsage.list({ index: 'policy', value: policy.id }).items);
      // Index order (oldest first), unlike the other lists.
      return listPage(store.c.policyUsage, query, {
        index: 'policy',
        value: policy.id,
        filter: (e) => (query.status === undefined || e.status === query.status) && (search === undefined || e.value_key.toLowerCase().includes(search)),
        view: (e) => ({ id: e.id, value_key: e.value_key, current_usage: shared?.get(e.id) ?? e.current_usage, status: e.status, object: 'policy_usage_entity' }),
        newestFirst: false,
      });
    },
  }),
  crud.member({
    method: 'PUT',
    path: '/entities/:entityId/reset',
    summary: "Reset one value key's usage under a usage limits policy",
    action: 'reset',
    scope: 'policies.update',
    response: S.empty,
    async handler({ params, principal, store }) {
      const policy = assertVisible(principal, store.c.usageLimitPolicies.get(params.id!), notFound);
      const entity = store.c.policyUsage.get(params.entityId!);
      if (entity === undefined || entity.policy_id !== policy.id) throw AdminErrors.notFound('Usage limits policy entity does not exist.');
      await resetShared(store, entity.id);
      resetEntity(store, entity.id);
      return {};
    },
  }),
];
