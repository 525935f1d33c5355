/**
 * Rate-limit policies, compiled and indexed in memory; rebuilt only when the collection's version
 * changes (any write, in any process sharing the data dir), so a request never lists the store.
 *
 * A policy applies to requests acting in its own workspace (a workspace admin's policy cannot
 * throttle another tenant), when every condition holds. Per workspace, policies are indexed by
 * one "anchor" condition with a literal value (`api_key = k1`, `metadata._user = alice`), so a
 * workspace with a thousand per-user policies checks only the ones naming this request's user:
 *
 *   workspace id ─▶ general:  [policies with only `*` or workspace_id conditions]
 *                └▶ anchored: condition key ─▶ value ─▶ [policies]
 *
 * MCP calls and model traffic are limited apart: a policy that names an MCP key (`mcp_server`,
 * `mcp_tool`, `mcp_method`) in a condition or in `group_by` applies to MCP calls (tools/call,
 * resources/read, prompts/get) and only to them; every other policy applies to model and
 * pass-through requests only, as before. So a policy written for model traffic never starts
 * counting tool calls, and `{conditions: [{key: 'mcp_server', value: '*'}], group_by: [{key: 'api_key'}]}`
 * is "every key's MCP calls". Token limits never apply to an MCP call (it uses no tokens).
 */
import { createHash } from 'node:crypto';
import type { Collection, GatewayContext, Records } from '../../core/index.js';
import { compileLimit, type AppliedLimit, type Limit } from './limits.js';
import { conditionHolds, factOf, type WorkspaceFacts } from './facts.js';
import { MCP_FACT_KEYS } from '../../core/index.js';

interface CompiledPolicy {
  conditions: ReadonlyArray<Records.PolicyCondition>;
  groupBy: ReadonlyArray<string>;
  limit: Limit;
  /** Names an MCP key: applies to MCP calls only (and other policies to model traffic only). */
  mcp: boolean;
}

interface WorkspacePolicies {
  general: CompiledPolicy[];
  anchored: Map<string, Map<string, CompiledPolicy[]>>;
}

/** Counter keys are bounded (LMDB keys stop at ~2 KB): long group values are hashed. */
const MAX_GROUP_CHARS = 256;

export interface PolicyIndex {
  /** Appends the limits of every policy that applies to this request (`mcp`: an MCP call's, else a model request's). */
  collect(ctx: GatewayContext, ws: WorkspaceFacts, out: AppliedLimit[], mcp: boolean): void;
}

export function createPolicyIndex(policies: Collection<Records.RateLimitPolicy>): PolicyIndex {
  let version = -1;
  let byWorkspace = new Map<string, WorkspacePolicies>();

  function current(): Map<string, WorkspacePolicies> {
    const v = policies.version();
    if (v !== version) {
      // Read the version first: a write landing during the rebuild bumps it again, and the next
      // request rebuilds once more instead of keeping a stale index.
      version = v;
      byWorkspace = build(policies.list({ filter: (p) => p.status === 'active' }).items);
    }
    return byWorkspace;
  }

  return {
    collect(ctx, ws, out, mcp) {
      const index = current();
      if (index.size === 0) return;
      const mine = index.get(ws.id);
      if (mine === undefined) return;
      for (const p of mine.general) if (p.mcp === mcp) apply(ctx, ws, p, out);
      for (const [key, byValue] of mine.anchored) {
        const value = factOf(ctx, ws, key);
        const candidates = value === undefined ? undefined : byValue.get(value);
        if (candidates !== undefined) for (const p of candidates) if (p.mcp === mcp) apply(ctx, ws, p, out);
      }
    },
  };
}

function build(records: ReadonlyArray<Records.RateLimitPolicy>): Map<string, WorkspacePolicies> {
  const index = new Map<string, WorkspacePolicies>();
  for (const record of records) {
    const label = record.name ? `policy "${record.name}"` : `policy ${record.id}`;
    const limit = compileLimit(`pol:${record.id}`, label, record.type, record.unit, record.value);
    if (limit === undefined) continue;
    const mcp = record.conditions.some((c) => MCP_FACT_KEYS.has(c.key)) || record.group_by.some((g) => MCP_FACT_KEYS.has(g.key));
    // An MCP call uses no tokens: a token limit on MCP calls would never count anything.
    if (mcp && limit.type === 'tokens') continue;
    const policy: CompiledPolicy = { conditions: record.conditions, groupBy: record.group_by.map((g) => g.key), limit, mcp };
    let ws = index.get(record.workspace_id);
    if (ws === undefined) index.set(record.workspace_id, (ws = { general: [], anchored: new Map() }));
    const anchor = record.conditions.find((c) => c.key !== 'workspace_id' && c.value !== '*');
    if (anchor === undefined) {
      ws.general.push(policy);
      continue;
    }
    let byValue = ws.anchored.get(anchor.key);
    if (byValue === undefined) ws.anchored.set(anchor.key, (byValue = new Map()));
    const list = byValue.get(anchor.value);
    if (list === undefined) byValue.set(anchor.value, [policy]);
    else list.push(policy);
  }
  return index;
}

function apply(ctx: GatewayContext, ws: WorkspaceFacts, p: CompiledPolicy, out: AppliedLimit[]): void {
  for (const c of p.conditions) if (!conditionHolds(ctx, ws, c.key, c.value)) return;
  out.push({ key: `${p.limit.key}:${groupKey(ctx, ws, p.groupBy)}`, limit: p.limit });
}

/**
 * Each distinct combination of group values gets its own counter. A request without one of the
 * values is counted in the "absent" group rather than skipped: leaving out a metadata field must
 * not be a way around a limit.
 */
function groupKey(ctx: GatewayContext, ws: WorkspaceFacts, keys: ReadonlyArray<string>): string {
  const values = keys.map((k) => factOf(ctx, ws, k) ?? null);
  const text = JSON.stringify(values);
  return text.length <= MAX_GROUP_CHARS ? text : `#${createHash('sha256').update(text).digest('base64url')}`;
}
