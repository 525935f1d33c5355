/**
 * Provider credentials as virtual keys and integrations hold them: the provider-specific fields
 * (Azure, AWS, Vertex, …) with which of them are secret, the custom headers, and the shape the
 * routing plugin gets back with everything unsealed ({@link ResolvedCredentials}).
 *
 * At rest a credential is split in two: non-secret fields stay readable (`model_config`,
 * `configurations`) so reads can show them, and the secret ones are sealed together as one JSON
 * object (`*_sealed`), so no response schema, log line or audit record can carry them in clear.
 */
import { S, type Store } from '../../core/index.js';
import { checkCustomHost, checkProviderFields, checkUpstreamUrl, type CustomHostPolicy } from '../../core/index.js';

/** What the routing plugin needs to call a provider, secrets unsealed (the contract is core's). */
export type { ResolvedCredentials } from '../../core/index.js';

const text = (maxLength = 1024): S.JsonSchema => ({ type: 'string', maxLength });

/** Provider ids: the adapters' names (`openai`, `azure-openai`, `bedrock`, `vertex-ai`, …). */
export const providerId: S.JsonSchema = {
  type: 'string',
  pattern: '^[a-z0-9-]+$',
  minLength: 1,
  maxLength: 64,
  description: 'A provider id, e.g. openai, azure-openai, anthropic, google, bedrock, vertex-ai, groq, mistral-ai, together-ai.',
};

/**
 * Every provider field a credential may carry (snake_case; the union of the reference's
 * per-provider `configurations` variants plus the virtual keys' Azure fields).
 */
export const providerFields: Record<string, S.JsonSchema> = {
  // Azure OpenAI / Azure AI
  resource_name: text(),
  deployment_name: text(),
  api_version: text(64),
  deployment_config: {
    type: 'array',
    maxItems: 50,
    items: {
      type: 'object',
      properties: { api_version: text(64), deployment_name: text(), alias: text(255), is_default: { type: 'boolean' } },
      required: ['api_version', 'deployment_name'],
      additionalProperties: false,
    },
  },
  azure_auth_mode: { type: 'string', enum: ['default', 'entra', 'managed'] },
  azure_resource_name: text(),
  azure_deployment_name: text(),
  azure_api_version: text(64),
  azure_foundry_url: { type: 'string', format: 'uri', maxLength: 2048 },
  azure_entra_tenant_id: text(255),
  azure_entra_client_id: text(255),
  azure_entra_client_secret: text(4096),
  azure_managed_client_id: text(255),
  // AWS (Bedrock, SageMaker)
  aws_auth_type: { type: 'string', enum: ['accessKey', 'assumedRole'] },
  aws_region: text(64),
  aws_access_key_id: text(255),
  aws_secret_access_key: text(4096),
  aws_session_token: text(8192),
  aws_role_arn: text(2048),
  aws_external_id: text(2048),
  // Vertex AI
  vertex_auth_type: { type: 'string', enum: ['basic', 'serviceAccount'] },
  vertex_project_id: text(255),
  vertex_region: text(64),
  vertex_service_account_json: { type: 'object', maxProperties: 64 },
  // Others
  openai_organization: text(255),
  openai_project: text(255),
  workers_ai_account_id: text(255),
  huggingface_base_url: { type: 'string', format: 'uri', maxLength: 2048 },
  snowflake_account: text(255),
};

/** The same fields, each accepting `null` (an update removes the field). */
export const nullableProviderFields: Record<string, S.JsonSchema> = Object.fromEntries(
  Object.entries(providerFields).map(([name, schema]) => [name, S.nullable(schema)]),
);

const SECRET_FIELDS = new Set(['aws_secret_access_key', 'aws_session_token', 'vertex_service_account_json', 'custom_headers']);

/** Fields sealed at rest and never shown: credentials, and custom headers (their values often are). */
export function isSecretField(name: string): boolean {
  return SECRET_FIELDS.has(name) || name.endsWith('_client_secret');
}

/** Header names as HTTP allows them; values without CR/LF, so a header cannot be smuggled in. */
export const customHeaders: S.JsonSchema = {
  type: 'object',
  maxProperties: 32,
  propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", maxLength: 256 },
  additionalProperties: { type: 'string', maxLength: 8192, pattern: '^[^\\r\\n]*$' },
};

export const customHost: S.JsonSchema = { type: 'string', format: 'uri', maxLength: 2048 };

/**
 * The SSRF guard on a stored custom host: checked when it is saved, so a refused address is a 400
 * to the admin rather than a failure on every model call later.
 */
export function assertCustomHost(url: string | null | undefined, policy: CustomHostPolicy, param: string): void {
  if (url === null || url === undefined) return;
  const refused = checkCustomHost(url, policy, param);
  if (refused !== null) throw refused;
}

/** Provider fields that are whole URLs the gateway may call: the upstream guard applies. */
const URL_VALUED_FIELDS = ['azure_foundry_url', 'huggingface_base_url'];

/**
 * Provider fields checked when saved, as the router checks them per request: the URL parts
 * (resource, deployment, API version, region, …) by their grammar, URL-valued fields by the
 * upstream guard. `prefix` locates them in the body (`model_config.`, `configurations.`, or none).
 * A 400 naming the field, never echoing the value.
 */
export function assertProviderFields(fields: Record<string, unknown> | null | undefined, policy: CustomHostPolicy, prefix = ''): void {
  if (fields === null || fields === undefined) return;
  const bad = checkProviderFields(fields, (field) => `${prefix}${field}`);
  if (bad !== null) throw bad;
  for (const name of URL_VALUED_FIELDS) {
    const url = fields[name];
    if (typeof url !== 'string') continue;
    const refused = checkUpstreamUrl(url, policy, `${prefix}${name}`);
    if (refused !== null) throw refused;
  }
}

/** Splits fields into the readable part and the secret part (undefined when there is none). */
export function splitSecrets(fields: Record<string, unknown>): { plain: Record<string, unknown>; secret: Record<string, unknown> | undefined } {
  const plain: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (isSecretField(name)) secret[name] = value;
    else plain[name] = value;
  }
  return { plain, secret: Object.keys(secret).length > 0 ? secret : undefined };
}

/** Seals a JSON object of secrets; null when there is nothing to seal. */
export function sealJson(store: Store, value: Record<string, unknown> | undefined): string | null {
  return value === undefined || Object.keys(value).length === 0 ? null : store.secrets.encrypt(JSON.stringify(value));
}

export function unsealJson(store: Store, sealed: string | null): Record<string, unknown> {
  return sealed === null ? {} : (JSON.parse(store.secrets.decrypt(sealed)) as Record<string, unknown>);
}

/**
 * Applies an update to a credential's fields: a given value replaces, `null` removes, an absent
 * field stays. Secret fields are merged inside the sealed blob, so updating one AWS field does not
 * require resending the others.
 */
export function mergeFields(
  store: Store,
  current: { plain: Record<string, unknown>; sealed: string | null },
  changes: Record<string, unknown>,
): { plain: Record<string, unknown>; sealed: string | null } {
  const plain = { ...current.plain };
  const touchesSecrets = Object.keys(changes).some(isSecretField);
  const secret = touchesSecrets ? unsealJson(store, current.sealed) : {};
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const target = isSecretField(name) ? secret : plain;
    if (value === null) delete target[name];
    else target[name] = value;
  }
  return { plain, sealed: touchesSecrets ? sealJson(store, secret) : current.sealed };
}

/** Picks the provider fields out of a request body (top-level fields win over `model_config`). */
export function pickProviderFields(body: Record<string, unknown>, nested?: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...nested };
  for (const name of Object.keys(providerFields)) if (body[name] !== undefined) out[name] = body[name];
  return out;
}

/** `expired` once the expiry has passed, else the stored status. */
export function effectiveStatus<T extends string>(status: T, expiresAt: string | null, now = Date.now()): T | 'expired' {
  return expiresAt !== null && Date.parse(expiresAt) <= now ? 'expired' : status;
}

/** Freezes a resolved credential (and its nested objects) so a caller cannot alter a shared copy. */
export function deepFreeze<T>(value: T, depth = 0): T {
  if (depth > 16 || value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value as Record<string, unknown>)) deepFreeze(inner, depth + 1);
  return Object.freeze(value);
}
