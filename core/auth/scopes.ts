/**
 * Permission scopes (the wire strings of the admin API) and which key kinds may hold them.
 *
 * The spec's operation table decides the split: organisation settings, workspaces, users and
 * organisation keys are organisation-key business; configs, guardrails, virtual keys, analytics and
 * the like are open to both kinds (a workspace key within its workspace); feedback is workspace-key only.
 */
import type { ApiKeyType } from '../store/records.js';

const crud = (resource: string, extra: string[] = []): string[] =>
  ['create', 'read', 'update', 'delete', 'list', ...extra].map((a) => `${resource}.${a}`);

/** Scopes only an organisation key may hold. */
export const ORGANISATION_ONLY_SCOPES: ReadonlyArray<string> = [
  ...crud('organisation_users'),
  ...crud('organisation_service_api_keys', ['rotate']),
  'organisation_settings.read',
  'organisation_settings.update',
  ...crud('workspaces').filter((s) => s === 'workspaces.create' || s === 'workspaces.delete'),
  'audit_logs.list',
  ...crud('organisation_integrations'),
  ...crud('organisation_mcp_integrations'),
  'model_pricing.update',
];

/** Scopes both kinds may hold (a workspace key applies them to its own workspace). */
export const SHARED_SCOPES: ReadonlyArray<string> = [
  'workspaces.read',
  'workspaces.update',
  'workspaces.list',
  ...crud('workspace_users'),
  ...crud('workspace_service_api_keys', ['rotate']),
  ...crud('workspace_user_api_keys', ['rotate']),
  ...crud('configs'),
  ...crud('guardrails'),
  ...crud('prompts', ['publish']),
  ...crud('virtual_keys', ['duplicate', 'copy']),
  ...crud('providers'),
  ...crud('policies'),
  ...crud('workspace_integrations'),
  'organisation_integrations.list',
  ...crud('workspace_mcp_integrations'),
  'organisation_mcp_integrations.list',
  ...crud('mcp_servers'),
  'analytics.view',
  'logs.export',
  'logs.list',
  'logs.view',
  // Model calls: an organisation key acts in the default workspace, so a fresh install can make
  // its first request with the bootstrap key.
  'completions.write',
];

/** Scopes only workspace keys hold: writing logs and feedback (the spec's table), invoking MCP tools. */
export const WORKSPACE_ONLY_SCOPES: ReadonlyArray<string> = ['logs.write', 'feedback.write', 'mcp.invoke'];

export const ALL_SCOPES: ReadonlyArray<string> = [...ORGANISATION_ONLY_SCOPES, ...SHARED_SCOPES, ...WORKSPACE_ONLY_SCOPES];

/** The scopes a key of this kind may be given; a create request asking for others is a 400. */
export function allowedScopes(type: ApiKeyType): ReadonlySet<string> {
  return new Set(type === 'organisation-service' ? [...ORGANISATION_ONLY_SCOPES, ...SHARED_SCOPES] : [...SHARED_SCOPES, ...WORKSPACE_ONLY_SCOPES]);
}

/** What a bootstrap admin key and `gateway keys create` give an organisation key by default. */
export const DEFAULT_ORGANISATION_SCOPES: ReadonlyArray<string> = [...ORGANISATION_ONLY_SCOPES, ...SHARED_SCOPES];

/** A sensible default for a workspace service key: everything within its workspace. */
export const DEFAULT_WORKSPACE_SCOPES: ReadonlyArray<string> = [...SHARED_SCOPES, ...WORKSPACE_ONLY_SCOPES];

/**
 * Named scope sets for people making keys by hand (`gateway keys create --preset NAME`), each
 * narrowed to what the key kind may hold.
 *
 * - `completions`: call models (`completions.write`);
 * - `mcp`: call MCP tools through the gateway (`mcp.invoke`, workspace keys);
 * - `read-only`: read and list everything the kind may read, view logs and analytics;
 * - `admin`: every scope the kind may hold.
 */
export const SCOPE_PRESETS: Readonly<Record<string, (type: ApiKeyType) => string[]>> = {
  completions: () => ['completions.write'],
  mcp: () => ['mcp.invoke'],
  'read-only': (type) => [...allowedScopes(type)].filter((s) => /\.(read|list|view)$/.test(s)),
  admin: (type) => [...allowedScopes(type)],
};
