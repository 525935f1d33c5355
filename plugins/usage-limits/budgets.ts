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
import { headerString, type GatewayContext, type Records, type Store } from '../../core/index.js';

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

/** The start of the current period and the start of the next one. */
export function period(reset: 'monthly' | 'weekly' | null | undefined, now: Date): { id: string; next: number | null } {
  if (reset === 'monthly') {
    return { id: `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`, next: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) };
  }
  if (reset === 'weekly') {
    // Weeks start on Monday 00:00 UTC.
    const day = (now.getUTCDay() + 6) % 7;
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - day);
    return { id: `w${new Date(start).toISOString().slice(0, 10)}`, next: start + 7 * 86_400_000 };
  }
  return { id: 'all', next: null };
}

export interface RequestFacts {
  workspaceId: string;
  workspaceSlug: string | undefined;
  apiKeyId: string | null;
  virtualKey: string | undefined;
  provider: string | undefined;
  model: string | undefined;
  metadata: Record<string, string>;
}

export function factsOf(ctx: GatewayContext, store: Store, workspaceId: string): RequestFacts {
  const model = typeof ctx.body?.model === 'string' ? ctx.body.model : undefined;
  const slug = model?.startsWith('@') ? model.slice(1, model.indexOf('/') === -1 ? undefined : model.indexOf('/')) : undefined;
  return {
    workspaceId,
    workspaceSlug: store.c.workspaces.get(workspaceId)?.slug,
    apiKeyId: ctx.get('principal')?.key_id ?? null,
    virtualKey: headerString(ctx.headers, 'x-gateway-virtual-key'),
    provider: slug ?? headerString(ctx.headers, 'x-gateway-provider'),
    model,
    metadata: ctx.metadata,
  };
}

function factValue(f: RequestFacts, key: string): string | undefined {
  switch (key) {
    case 'workspace_id':
      return f.workspaceId;
    case 'api_key':
      return f.apiKeyId ?? undefined;
    case 'virtual_key':
      return f.virtualKey;
    case 'provider':
      return f.provider;
    case 'model':
      return f.model;
    default:
      return key.startsWith('metadata.') ? f.metadata[key.slice('metadata.'.length)] : undefined;
  }
}

function conditionsMatch(p: Policy, f: RequestFacts): boolean {
  return p.conditions.every((c) => {
    const v = factValue(f, c.key);
    if (v === undefined) return false;
    if (c.value === '*') return true;
    return c.key === 'workspace_id' ? c.value === f.workspaceId || c.value === f.workspaceSlug : c.value === v;
  });
}

/** `api_key:<id>` joined for every group_by key; null when a grouping value is missing. */
function valueKeyOf(p: Policy, f: RequestFacts): string | null {
  const parts: string[] = [];
  for (const g of p.group_by) {
    const v = factValue(f, g.key);
    if (v === undefined) return null;
    parts.push(`${g.key}:${v}`);
  }
  return parts.join('|');
}

export function policyBudgets(policies: ReadonlyArray<Policy>, f: RequestFacts, now: Date): Budget[] {
  const out: Budget[] = [];
  for (const p of policies) {
    if (p.status !== 'active' || p.workspace_id !== f.workspaceId || !conditionsMatch(p, f)) continue;
    const valueKey = valueKeyOf(p, f);
    if (valueKey === null) continue;
    const per = period(p.periodic_reset, now);
    // Policy counters keep the admin API's entity id (`<policy>:<value key>`); a periodic reset
    // zeroes them (usage-limits.ts in admin-policies reads the same records).
    out.push({ counterId: `${p.id}:${valueKey}`, owner: p.id, valueKey, type: p.type, limit: p.credit_limit, alertThreshold: p.alert_threshold, workspaceId: p.workspace_id, resetsAt: per.next });
  }
  return out;
}

function entityBudget(kind: string, id: string, limits: Records.UsageLimits | null | undefined, marker: string, now: Date, workspaceId: string | null): Budget | undefined {
  if (!limits || limits.credit_limit === null || limits.credit_limit === undefined) return undefined;
  const per = period(limits.periodic_reset, now);
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

export function entityBudgets(store: Store, f: RequestFacts, now: Date): Budget[] {
  const out: Budget[] = [];
  if (f.apiKeyId !== null) {
    const key = store.c.apiKeys.get(f.apiKeyId);
    const b = key && entityBudget('api_key', key.id, key.usage_limits, key.last_reset_at ?? 'start', now, key.workspace_id);
    if (b) out.push({ ...b, exhaust: { kind: 'api_key', id: key!.id } });
  }
  if (f.virtualKey !== undefined) {
    const vk = store.c.virtualKeys.cachedBy('slug', f.virtualKey);
    const b = vk && vk.workspace_id === f.workspaceId ? entityBudget('virtual_key', vk.id, vk.usage_limits, 'start', now, vk.workspace_id) : undefined;
    if (b) out.push({ ...b, exhaust: { kind: 'virtual_key', id: vk!.id } });
  }
  const ws = store.c.workspaces.get(f.workspaceId);
  const wsBudget = ws && entityBudget('workspace', ws.id, ws.usage_limits[0], 'start', now, ws.id);
  if (wsBudget) out.push(wsBudget);
  if (f.provider !== undefined) {
    const p = store.c.providers.cachedBy('slug', f.provider);
    const b = p && p.workspace_id === f.workspaceId ? entityBudget('provider', p.id, p.usage_limits, 'start', now, p.workspace_id) : undefined;
    if (b) out.push({ ...b, exhaust: { kind: 'provider', id: p!.id } });
  }
  return out;
}
