/**
 * Which budgets a request spends against, and the counter each one uses.
 *
 *   policies   usage-limits policies whose `conditions` match; one counter per `group_by` value key
 *   entities   the API key's, the virtual key's, the workspace's and the provider's `usage_limits`
 *
 * A counter's id carries the budget's period, so a periodic reset (weekly, monthly) or an admin's
 * `reset_usage` starts a fresh counter instead of rewriting an old one: nothing to sweep, and a
 * reset in one process is seen by all.
 */
import { budgetPeriod, conditionHolds, factOf, type GatewayContext, type Records, type Store, type WorkspaceFacts } from '../../core/index.js';

type Policy = Records.UsageLimitPolicy;

export interface Budget {
  /** Counter id in `policy_usage`: `<policy id>:<value key>` or `entity:<kind>:<id>@<period>`. */
  counterId: string;
  /** `policy_id` of the counter record: the policy's id, or `entity:<kind>:<id>`. */
  owner: string;
  valueKey: string;
  type: 'cost' | 'tokens';
  /** Tokens, or USD for cost budgets. */
  limit: number;
  alertThreshold: number | null;
  workspaceId: string | null;
  /** Marks the entity record exhausted when the budget runs out (API keys, virtual keys, providers). */
  exhaust?: { kind: 'api_key' | 'virtual_key' | 'provider'; id: string };
  /** When the budget's period ends, for `Retry-After` (ms since epoch), if it resets. */
  resetsAt: number | null;
}

/** The start of the current period and the start of the next one (one definition, in core). */
export const period = budgetPeriod;

/** The acting workspace, as conditions name it (id or slug). */
export function workspaceFacts(store: Store, workspaceId: string): WorkspaceFacts {
  return { id: workspaceId, slug: store.c.workspaces.cached(workspaceId)?.slug };
}

/**
 * `api_key:<id>|metadata.user:alice` for the policy's group_by keys. A missing value groups with
 * the other requests missing it (as rate limits do): leaving a field out is no way around a budget.
 */
function valueKeyOf(p: Policy, ctx: GatewayContext, ws: WorkspaceFacts): string {
  return p.group_by.map((g) => `${g.key}:${factOf(ctx, ws, g.key) ?? ''}`).join('|');
}

export function policyBudgets(policies: ReadonlyArray<Policy>, ctx: GatewayContext, ws: WorkspaceFacts, now: Date): Budget[] {
  const out: Budget[] = [];
  for (const p of policies) {
    if (p.status !== 'active' || p.workspace_id !== ws.id) continue;
    if (!p.conditions.every((c) => conditionHolds(ctx, ws, c.key, c.value))) continue;
    const valueKey = valueKeyOf(p, ctx, ws);
    const per = period(p.periodic_reset, now);
    // A cumulative policy's counter is `<policy>:<value key>` (the admin API's entity id); a
    // periodic one adds its period, so a new week or month starts a fresh counter by itself.
    const counterId = per.next === null ? `${p.id}:${valueKey}` : `${p.id}:${valueKey}@${per.id}`;
    out.push({ counterId, owner: p.id, valueKey, type: p.type, limit: p.credit_limit, alertThreshold: p.alert_threshold, workspaceId: p.workspace_id, resetsAt: per.next });
  }
  return out;
}

function entityBudget(kind: string, id: string, limits: Records.UsageLimits | null | undefined, marker: string, now: () => Date, workspaceId: string | null): Budget | undefined {
  if (!limits || limits.credit_limit === null || limits.credit_limit === undefined) return undefined;
  const per = period(limits.periodic_reset, now());
  return {
    counterId: `entity:${kind}:${id}@${marker}@${per.id}`,
    owner: `entity:${kind}:${id}`,
    valueKey: `${kind}:${id}`,
    type: limits.type,
    limit: limits.credit_limit,
    alertThreshold: limits.alert_threshold ?? null,
    workspaceId,
    resetsAt: per.next,
  };
}

/** The budgets of the request's key, virtual key, workspace and provider; `now` is asked only when one has a limit. */
export function entityBudgets(store: Store, ctx: GatewayContext, ws: WorkspaceFacts, now: () => Date): Budget[] {
  const out: Budget[] = [];
  const apiKeyId = factOf(ctx, ws, 'api_key');
  const virtualKey = factOf(ctx, ws, 'virtual_key');
  const provider = factOf(ctx, ws, 'provider');
  if (apiKeyId !== undefined) {
    const key = store.c.apiKeys.cached(apiKeyId);
    const b = key && entityBudget('api_key', key.id, key.usage_limits, key.last_reset_at ?? 'start', now, key.workspace_id);
    if (b) out.push({ ...b, exhaust: { kind: 'api_key', id: key.id } });
  }
  if (virtualKey !== undefined) {
    const vk = store.c.virtualKeys.cachedBy('slug', virtualKey);
    const b = vk && vk.workspace_id === ws.id ? entityBudget('virtual_key', vk.id, vk.usage_limits, 'start', now, vk.workspace_id) : undefined;
    if (b) out.push({ ...b, exhaust: { kind: 'virtual_key', id: vk!.id } });
  }
  const workspace = store.c.workspaces.cached(ws.id);
  const wsBudget = workspace && entityBudget('workspace', workspace.id, workspace.usage_limits[0], 'start', now, workspace.id);
  if (wsBudget) out.push(wsBudget);
  if (provider !== undefined) {
    const p = store.c.providers.cachedBy('slug', provider);
    const b = p && p.workspace_id === ws.id ? entityBudget('provider', p.id, p.usage_limits, 'start', now, p.workspace_id) : undefined;
    if (b) out.push({ ...b, exhaust: { kind: 'provider', id: p!.id } });
  }
  return out;
}
