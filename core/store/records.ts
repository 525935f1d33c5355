/**
 * The records the control plane stores. Field names are the admin API's (snake_case), so a
 * response is the record minus its secrets. Times are ISO 8601 strings; ids are UUIDv7.
 * Secrets never sit here in clear: provider keys are sealed (`*_sealed`, see secrets.ts), API keys
 * are SHA-256 hashes.
 */

export type RateUnit = 'rpm' | 'rph' | 'rpd' | 'rps' | 'rpw';

export interface RateLimit {
  type: 'requests' | 'tokens';
  unit: RateUnit;
  value: number;
}

export interface UsageLimits {
  credit_limit: number | null;
  type: 'cost' | 'tokens';
  alert_threshold: number | null;
  periodic_reset: 'monthly' | 'weekly' | null;
  periodic_reset_days?: number | null;
  next_usage_reset_at?: string | null;
}

interface Timestamps {
  created_at: string;
  last_updated_at: string;
}

export interface Organisation extends Timestamps {
  id: string;
  name: string;
}

export interface Workspace extends Timestamps {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  organisation_id: string;
  defaults: {
    metadata: Record<string, string>;
    is_default?: number;
    user_api_key_config?: string | null;
    /** Saved guardrails (ids or slugs) every request of this workspace goes through. */
    input_guardrails?: string[];
    output_guardrails?: string[];
    /** MCP tools this workspace's keys may call (`server/tool`, `*` wildcards); absent: every enabled tool. */
    mcp_tools?: string[];
  };
  usage_limits: UsageLimits[];
  rate_limits: RateLimit[];
  status: 'active' | 'archived';
}

export type OrgRole = 'owner' | 'admin' | 'member';
export type WorkspaceRole = 'admin' | 'manager' | 'member';

export interface User extends Timestamps {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: OrgRole;
  organisation_id: string;
}

export interface WorkspaceMember extends Timestamps {
  /** `${workspace_id}:${user_id}` */
  id: string;
  workspace_id: string;
  user_id: string;
  role: WorkspaceRole;
}

export interface Invite extends Timestamps {
  id: string;
  email: string;
  role: 'admin' | 'member';
  workspaces: Array<{ id: string; role: WorkspaceRole }>;
  workspace_api_key_details: { scopes: string[] } | null;
  /** SHA-256 of the invite token (the token itself is only in the link). */
  token_hash: string;
  status: 'pending' | 'cancelled' | 'accepted' | 'expired';
  invited_by: string | null;
  organisation_id: string;
  expires_at: string;
  accepted_at: string | null;
}

export type ApiKeyType = 'organisation-service' | 'workspace-service' | 'workspace-user';

export interface ApiKeyRecord extends Timestamps {
  id: string;
  name: string;
  description: string | null;
  type: ApiKeyType;
  organisation_id: string;
  workspace_id: string | null;
  user_id: string | null;
  /** SHA-256 of the live secret. */
  hash: string;
  /** After a rotation, the old secret's hash stays valid until `previous_expires_at`. */
  previous_hash: string | null;
  previous_expires_at: string | null;
  /** The masked secret shown in reads (`gw-a*******xyz`). */
  masked_key: string;
  status: 'active' | 'exhausted';
  scopes: string[];
  defaults: {
    metadata?: Record<string, string>;
    config_id?: string | null;
    allow_config_override?: boolean;
    /** Saved guardrails (ids or slugs) every request made with this key goes through. */
    input_guardrails?: string[];
    output_guardrails?: string[];
    /** MCP tools this key may call (`server/tool`, `*` wildcards), within its workspace's list; absent: no narrowing. */
    mcp_tools?: string[];
  } | null;
  rate_limits: RateLimit[] | null;
  usage_limits: UsageLimits | null;
  alert_emails: string[];
  expires_at: string | null;
  rotation_policy: Record<string, unknown> | null;
  creation_mode: 'ui' | 'api' | 'auto';
  last_reset_at: string | null;
  /** Set by DELETE: the key stops working at once; the record stays for the audit trail. */
  deleted_at: string | null;
}

export interface ConfigRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  organisation_id: string;
  workspace_id: string;
  config: Record<string, unknown>;
  version_id: string;
  is_default: number;
  status: 'active' | 'archived';
  owner_id: string | null;
  updated_by: string | null;
}

export interface ConfigVersion {
  /** The version id. */
  id: string;
  config_id: string;
  slug: string;
  name: string;
  config: Record<string, unknown>;
  created_at: string;
  created_by: string | null;
}

/**
 * A saved guardrail: a named, versioned list of inline guardrail objects (each one or more check
 * ids with their parameters, plus action keys such as `deny`), referred to by id or slug from
 * configs, API keys and workspaces.
 */
export interface GuardrailRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  organisation_id: string;
  workspace_id: string;
  /** Inline guardrail objects, e.g. `[{"default.pii": {}, "redact": true}]`. */
  checks: Array<Record<string, unknown>>;
  version_id: string;
  status: 'active' | 'archived';
  owner_id: string | null;
  updated_by: string | null;
}

export interface GuardrailVersion {
  /** The version id. */
  id: string;
  guardrail_id: string;
  slug: string;
  name: string;
  checks: Array<Record<string, unknown>>;
  created_at: string;
  created_by: string | null;
}

/**
 * A stored prompt template (plugin `prompts`): the record holds the default version's content
 * (what `GET /v1/prompts/{id}` answers and what a call without a version or label renders). Every
 * save makes an immutable {@link PromptVersion}; `version_id` / `version` name the default one,
 * moved only by publish (`makeDefault`). `latest_version` is the highest version number.
 */
export interface PromptRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  organisation_id: string;
  workspace_id: string;
  /** The default version. */
  version_id: string;
  version: number;
  latest_version: number;
  /** Label name → version number (`production`, `staging`). */
  labels: Record<string, number>;
  status: 'active' | 'archived';
  owner_id: string | null;
  updated_by: string | null;
}

/** What a prompt version holds: everything a render needs. */
export interface PromptContent {
  /** A text template, or chat messages whose `content` strings are templates. */
  template: string | Array<{ role: string; content: string; [key: string]: unknown }>;
  model: string;
  parameters: Record<string, unknown>;
  tools: unknown[] | null;
  tool_choice: unknown;
  response_format: Record<string, unknown> | null;
  /** Exactly one is set. */
  virtual_key: string | null;
  config: string | null;
  provider: string | null;
  /** Computed at save time from the parse tree (partials as they were then). */
  variables: string[];
  required_variables: string[];
  partials: string[];
}

export interface PromptVersion extends PromptContent {
  /** The version id. */
  id: string;
  prompt_id: string;
  /** 1, 2, 3… per prompt. */
  version: number;
  name: string;
  description: string | null;
  created_at: string;
  created_by: string | null;
}

/** A reusable template fragment, included from prompts by slug (`{{> slug}}`); versioned like prompts. */
export interface PromptPartialRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  organisation_id: string;
  workspace_id: string;
  /** The latest version: what renders use. */
  content: string;
  version_id: string;
  version: number;
  status: 'active' | 'archived';
  owner_id: string | null;
  updated_by: string | null;
}

export interface PromptPartialVersion {
  id: string;
  partial_id: string;
  version: number;
  name: string;
  content: string;
  description: string | null;
  created_at: string;
  created_by: string | null;
}

export interface VirtualKeyRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  note: string | null;
  provider: string;
  key_sealed: string | null;
  masked_key: string | null;
  custom_host: string | null;
  /** Header values are sealed too: they often carry credentials. */
  custom_headers_sealed: string | null;
  /** Provider fields: Azure resource/deployment/api-version, AWS region/credentials (sealed), Vertex project/region. */
  model_config: Record<string, unknown>;
  model_config_sealed: string | null;
  usage_limits: UsageLimits | null;
  rate_limits: RateLimit[];
  expires_at: string | null;
  status: 'active' | 'exhausted' | 'expired';
  workspace_id: string;
  organisation_id: string;
}

export interface IntegrationRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  ai_provider_id: string;
  description: string | null;
  key_sealed: string | null;
  masked_key: string | null;
  /** Non-secret configuration fields. */
  configurations: Record<string, unknown>;
  /** Secret configuration fields, sealed as one JSON object. */
  configurations_sealed: string | null;
  workspace_id: string | null;
  organisation_id: string;
  status: 'active' | 'archived';
}

export interface ProviderRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  integration_id: string;
  workspace_id: string;
  organisation_id: string;
  note: string | null;
  usage_limits: UsageLimits | null;
  rate_limits: RateLimit[];
  expires_at: string | null;
  status: 'active' | 'exhausted' | 'expired';
}

export interface PolicyCondition {
  key: string;
  value: string;
}

export interface RateLimitPolicy extends Timestamps {
  id: string;
  name: string | null;
  conditions: PolicyCondition[];
  group_by: Array<{ key: string }>;
  type: 'requests' | 'tokens';
  unit: 'rpm' | 'rph' | 'rpd';
  value: number;
  status: 'active' | 'archived';
  workspace_id: string;
  organisation_id: string;
}

export interface UsageLimitPolicy extends Timestamps {
  id: string;
  name: string | null;
  conditions: PolicyCondition[];
  group_by: Array<{ key: string }>;
  type: 'cost' | 'tokens';
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: 'monthly' | 'weekly' | null;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
  status: 'active' | 'archived';
  workspace_id: string;
  organisation_id: string;
}

/** Usage of one value key under a usage-limits policy (e.g. `metadata._user:alice`). */
export interface PolicyUsageEntity extends Timestamps {
  /** `${policy_id}:${value_key}` */
  id: string;
  policy_id: string;
  value_key: string;
  current_usage: number;
  status: 'active' | 'exhausted';
  is_threshold_alerts_sent: boolean;
  is_exhausted_alerts_sent: boolean;
}

/** Prices in USD cents per token (or per unit), as in the admin API's pricing config. */
export interface ModelPricing extends Timestamps {
  /** `${provider}/${model}` */
  id: string;
  provider: string;
  model: string;
  pay_as_you_go: Record<string, unknown>;
  currency: 'USD';
  /** `default` ships with the gateway; `custom` was set by an admin (and wins). */
  source: 'default' | 'custom';
}

export interface McpIntegrationRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  url: string;
  auth_type: 'oauth_auto' | 'headers' | 'none' | 'oauth_client_credentials';
  transport: 'http' | 'sse';
  configurations: Record<string, unknown>;
  configurations_sealed: string | null;
  workspace_id: string | null;
  organisation_id: string;
  owner_id: string | null;
  status: 'active' | 'archived';
  /** Tools, prompts and resources an operator turned off for every server built on it. */
  disabled_capabilities?: McpCapabilityRef[];
}

/** One tool, prompt or resource (by URI) of an MCP server. */
export interface McpCapabilityRef {
  type: 'tool' | 'prompt' | 'resource';
  name: string;
}

export interface McpServerRecord extends Timestamps {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  mcp_integration_id: string;
  workspace_id: string;
  organisation_id: string;
  owner_id: string | null;
  status: 'active' | 'archived';
  /** Turned off for this server only (on top of its integration's). */
  disabled_capabilities?: McpCapabilityRef[];
}

export interface AuditRecord {
  id: string;
  timestamp: string;
  method: string;
  uri: string;
  request_id: string;
  /** JSON string, secrets masked. */
  request_body: string;
  query_params: string;
  user_id: string | null;
  api_key_id: string | null;
  user_type: 'user' | 'api_key';
  organisation_id: string;
  workspace_id: string | null;
  response_status_code: number;
  resource_type: string;
  action: string;
  client_ip: string;
}

/** A usage budget crossed its alert threshold or ran out. */
export interface UsageAlert {
  id: string;
  created_at: string;
  kind: 'threshold' | 'exhausted';
  /** `policy:<policy id>` or `<entity kind>:<entity id>` (api_key, virtual_key, workspace, provider). */
  budget: string;
  value_key: string;
  workspace_id: string | null;
  type: 'cost' | 'tokens';
  limit: number;
  usage: number;
}
