/**
 * Rate limits policies, exactly as the spec gives them: create, list (filters `workspace_id`,
 * `status` — active when omitted — `type`, `unit`; paginated), get, update (PUT answers 200 `{}`),
 * delete (archives). Enforcement is the `rate-limit` plugin's.
 */
import { AdminErrors, assertVisible, crudRoutes, listPage, nowIso, uuidv7, S, type AnyAdminRoute, type Records } from '../../core/index.js';

type Policy = Records.RateLimitPolicy;

const policySchema = S.record({
  id: S.str,
  name: S.strOrNull,
  conditions: { type: 'array', items: S.record({ key: S.str, value: S.str }) },
  group_by: { type: 'array', items: S.record({ key: S.str }) },
  type: S.str,
  unit: S.str,
  value: S.num,
  status: S.str,
  workspace_id: S.str,
  organisation_id: S.str,
  created_at: S.str,
  last_updated_at: S.str,
  object: S.str,
});

const view = (p: Policy): Policy & { object: string } => ({ ...p, object: 'policy_rate_limits' });

interface CreateBody {
  name?: string;
  conditions: Policy['conditions'];
  group_by: Policy['group_by'];
  type: Policy['type'];
  unit: Policy['unit'];
  value: number;
}

interface ListQuery {
  status: 'active' | 'archived';
  type?: Policy['type'];
  unit?: Policy['unit'];
  current_page: number;
  page_size: number;
}

const resource = 'rate_limits_policy';
const crud = crudRoutes({ path: '/v1/policies/rate-limits', key: 'id', resource, scopes: 'policies', level: 'workspace' });

export const rateLimitPolicyRoutes: AnyAdminRoute[] = [
  crud.create<CreateBody>({
    summary: 'Create a rate limits policy',
    body: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 255 },
        conditions: S.conditions,
        group_by: S.groupBy,
        type: { type: 'string', enum: ['requests', 'tokens'] },
        unit: { type: 'string', enum: ['rpm', 'rph', 'rpd'] },
        value: { type: 'number', minimum: 0 },
        workspace_id: S.workspaceRef,
        organisation_id: { type: 'string' },
      },
      required: ['conditions', 'group_by', 'type', 'unit', 'value'],
      additionalProperties: false,
    },
    response: S.record({ id: S.str, object: S.str }),
    handler({ body, workspace, principal, store }) {
      const now = nowIso();
      const policy: Policy = {
        id: uuidv7(),
        name: body.name ?? null,
        conditions: body.conditions,
        group_by: body.group_by,
        type: body.type,
        unit: body.unit,
        value: body.value,
        status: 'active',
        workspace_id: workspace!.id,
        organisation_id: principal.organisation_id,
        created_at: now,
        last_updated_at: now,
      };
      store.c.rateLimitPolicies.insert(policy);
      return { id: policy.id, object: 'policy_rate_limits' };
    },
  }),
  crud.list<never, ListQuery>({
    summary: 'List rate limits policies',
    workspaceDefault: 'all',
    query: {
      properties: {
        workspace_id: S.workspaceRef,
        status: { type: 'string', enum: ['active', 'archived'], default: 'active' },
        type: { type: 'string', enum: ['requests', 'tokens'] },
        unit: { type: 'string', enum: ['rpm', 'rph', 'rpd'] },
        ...S.pagination,
      },
    },
    response: S.listOf(policySchema),
    handler({ query, workspace, store }) {
      return listPage(store.c.rateLimitPolicies, query, {
        workspace,
        filter: (p) => p.status === query.status && (query.type === undefined || p.type === query.type) && (query.unit === undefined || p.unit === query.unit),
        view,
      });
    },
  }),
  crud.read<never, { status?: string }>({
    summary: 'Get a rate limits policy',
    query: { properties: { status: { type: 'string', enum: ['active', 'archived'] } } },
    response: policySchema,
    handler({ params, query, principal, store }) {
      const policy = assertVisible(principal, store.c.rateLimitPolicies.get(params.id!), 'Rate limits policy');
      if (query.status !== undefined && policy.status !== query.status) throw AdminErrors.notFound('Rate limits policy does not exist.');
      return view(policy);
    },
  }),
  crud.update<{ name?: string; unit?: Policy['unit']; value?: number }>({
    summary: 'Update a rate limits policy',
    body: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 255 },
        unit: { type: 'string', enum: ['rpm', 'rph', 'rpd'] },
        value: { type: 'number', minimum: 0 },
      },
      additionalProperties: false,
    },
    response: S.empty,
    handler({ params, body, principal, store }) {
      assertVisible(principal, store.c.rateLimitPolicies.get(params.id!), 'Rate limits policy');
      store.c.rateLimitPolicies.update(params.id!, (p) => ({
        ...p,
        name: body.name ?? p.name,
        unit: body.unit ?? p.unit,
        value: body.value ?? p.value,
        last_updated_at: nowIso(),
      }));
      return {};
    },
  }),
  crud.delete({
    summary: 'Delete (archive) a rate limits policy',
    response: S.empty,
    handler({ params, principal, store }) {
      assertVisible(principal, store.c.rateLimitPolicies.get(params.id!), 'Rate limits policy');
      // Deleting archives: the policy stops applying, and its history stays for the audit trail.
      store.c.rateLimitPolicies.update(params.id!, (p) => ({ ...p, status: 'archived', last_updated_at: nowIso() }));
      return {};
    },
  }),
];
