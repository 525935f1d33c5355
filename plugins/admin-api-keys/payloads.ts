/**
 * The API key payloads: the fields a create or update body may carry, and the read shape.
 *
 * Reads show the masked secret in `key` (as the reference does). The response schema is the
 * guarantee that nothing else leaves: `hash` and `previous_hash` are simply not in it.
 */
import { S, type Records } from '../../core/index.js';

type ApiKey = Records.ApiKeyRecord;

const rateLimit: S.JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['requests', 'tokens'] },
    // API keys take two more units than policies (the reference's API-key RateLimit).
    unit: { type: 'string', enum: ['rpm', 'rph', 'rpd', 'rps', 'rpw'] },
    value: { type: 'integer', minimum: 0 },
  },
  required: ['type', 'unit', 'value'],
  additionalProperties: false,
};

/** Saved guardrails (ids or slugs) a key's requests always get; checked by the guardrails plugin. */
const guardrailRefs: S.JsonSchema = { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 255 } };

/** The fields of `defaults` naming saved guardrails. */
export const GUARDRAIL_DEFAULTS = ['input_guardrails', 'output_guardrails'] as const;

/**
 * The key's MCP allow-list (read by the mcp-gateway plugin): `server/tool` patterns, `*` matching
 * any run of characters; absent, no narrowing beyond the workspace's. Same schema as a workspace's.
 */
const mcpTools: S.JsonSchema = {
  type: 'array',
  maxItems: 100,
  items: { type: 'string', minLength: 3, maxLength: 200, pattern: '^[A-Za-z0-9_*.-]+/[A-Za-z0-9_*./:-]+$' },
  description: 'MCP tools this key may call: `server/tool` patterns, `*` matches any run of characters.',
};

const defaults: S.JsonSchema = {
  type: 'object',
  nullable: true,
  properties: {
    metadata: {
      type: 'object',
      maxProperties: 32,
      propertyNames: { maxLength: 64 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    config_id: { type: 'string', minLength: 1, maxLength: 255, nullable: true },
    allow_config_override: { type: 'boolean', default: true },
    input_guardrails: guardrailRefs,
    output_guardrails: guardrailRefs,
    mcp_tools: mcpTools,
  },
  additionalProperties: false,
};

/** The fields create and update share; every one bounded, so bad input is a 400 naming it. */
export const keyFields: Record<string, S.JsonSchema> = {
  name: S.name255,
  description: { type: 'string', maxLength: 1024, nullable: true },
  scopes: { type: 'array', minItems: 1, maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 128 } },
  rate_limits: { type: 'array', maxItems: 10, items: rateLimit, nullable: true },
  usage_limits: S.nullable(S.usageLimits),
  defaults,
  alert_emails: { type: 'array', maxItems: 20, items: { type: 'string', format: 'email', maxLength: 320 } },
  expires_at: S.nullable(S.dateTime),
};

/** What a body may say about a key (create and update). */
export interface KeyFieldsBody {
  name?: string;
  description?: string | null;
  scopes?: string[];
  rate_limits?: Records.RateLimit[] | null;
  usage_limits?: Partial<Records.UsageLimits> | null;
  defaults?: ApiKey['defaults'];
  alert_emails?: string[];
  expires_at?: string | null;
}

const numOrNull: S.JsonSchema = { type: 'number', nullable: true };

export const apiKeySchema: S.JsonSchema = S.record({
  id: S.str,
  key: S.str,
  name: S.str,
  description: S.strOrNull,
  type: S.str,
  organisation_id: S.str,
  workspace_id: S.strOrNull,
  user_id: S.strOrNull,
  status: S.str,
  scopes: S.strings,
  rate_limits: { type: 'array', nullable: true, items: S.record({ type: S.str, unit: S.str, value: S.num }) },
  usage_limits: {
    type: 'object',
    nullable: true,
    properties: {
      credit_limit: numOrNull,
      type: S.str,
      alert_threshold: numOrNull,
      periodic_reset: S.strOrNull,
      periodic_reset_days: numOrNull,
      next_usage_reset_at: S.strOrNull,
    },
  },
  defaults: {
    type: 'object',
    nullable: true,
    properties: { metadata: S.stringMap, config_id: S.strOrNull, allow_config_override: S.bool, input_guardrails: S.strings, output_guardrails: S.strings, mcp_tools: S.strings },
  },
  alert_emails: S.strings,
  expires_at: S.strOrNull,
  creation_mode: S.str,
  last_reset_at: S.strOrNull,
  created_at: S.str,
  last_updated_at: S.str,
  object: S.str,
});

/** The read shape: the record with the masked secret as `key` (the serializer drops the rest). */
export function view(k: ApiKey): Omit<ApiKey, 'hash' | 'previous_hash'> & { key: string; object: 'api-key' } {
  const { hash: _hash, previous_hash: _previous, ...rest } = k;
  return { ...rest, key: k.masked_key, object: 'api-key' };
}
