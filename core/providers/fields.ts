/**
 * The grammar of provider fields that end up inside an upstream URL: an Azure resource becomes a
 * host name label, a deployment and an API version become path and query parts, an AWS or Vertex
 * region becomes part of a host name. A value outside its grammar (`127.0.0.1:9300/`,
 * `x@127.0.0.1:9300/`) could move the URL's authority, so it is refused with a 400
 * `invalid_provider_field` before any URL is built: in direct-mode headers, inline and saved
 * configs, virtual keys and integrations (at save time), and again by the adapters themselves.
 *
 * Messages name the field (a header or a config path), never the value.
 */
import { Errors, type GatewayError } from '../errors.js';

interface Rule {
  pattern: RegExp;
  /** What the value must be, for the message. */
  what: string;
}

/** RFC 1035 label: a host name part, never a dot, colon, slash or `@`. */
const DNS_LABEL: Rule = { pattern: /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i, what: 'a DNS label (letters, digits and inner hyphens, at most 63)' };
/** Azure deployment names: letters, digits, `.`, `_`, `-`; starting with a letter or digit (so never `..`). */
const DEPLOYMENT: Rule = { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, what: 'a deployment name (letters, digits, ".", "_", "-", at most 128)' };
const API_VERSION: Rule = { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, what: 'an API version (letters, digits, ".", "_", "-", at most 64)' };
/** AWS and Google Cloud regions: `us-east-1`, `europe-west4`. */
const REGION: Rule = { pattern: /^[a-z0-9-]{1,32}$/, what: 'a region (lower-case letters, digits and hyphens, at most 32)' };
/** Google Cloud project ids, including the legacy domain-scoped `example.com:project`. */
const PROJECT: Rule = { pattern: /^[a-z0-9][a-z0-9.:-]{0,127}$/i, what: 'a project id (letters, digits, ".", ":", "-", at most 128)' };
const ACCOUNT: Rule = { pattern: /^[A-Za-z0-9_-]{1,128}$/, what: 'an account id (letters, digits, "_", "-", at most 128)' };
/** Snowflake account identifiers: `org-account` or `locator.region.cloud`. */
const DOTTED_ACCOUNT: Rule = { pattern: /^[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63}){0,3}$/, what: 'an account identifier (labels of letters, digits, "_", "-")' };

const RULES: Readonly<Record<string, Rule>> = {
  resource_name: DNS_LABEL,
  azure_resource_name: DNS_LABEL,
  deployment_name: DEPLOYMENT,
  deployment_id: DEPLOYMENT,
  azure_deployment_name: DEPLOYMENT,
  azure_deployment_id: DEPLOYMENT,
  api_version: API_VERSION,
  azure_api_version: API_VERSION,
  aws_region: REGION,
  vertex_region: REGION,
  vertex_project_id: PROJECT,
  workers_ai_account_id: ACCOUNT,
  snowflake_account: DOTTED_ACCOUNT,
};

/** Names of the fields with a grammar (the rest are credentials or free text, not URL parts). */
export const URL_FIELDS: ReadonlySet<string> = new Set(Object.keys(RULES));

/**
 * Null when `value` fits the grammar of provider field `name` (or `name` has none), else the 400.
 * An absent or empty value is left to the adapter, which treats it as missing.
 */
export function checkProviderField(name: string, value: unknown, param: string): GatewayError | null {
  const rule = RULES[name];
  if (rule === undefined || value === undefined || value === null || value === '') return null;
  if (typeof value === 'string' && rule.pattern.test(value)) return null;
  return Errors.invalidProviderField(`${param} must be ${rule.what}.`, { param });
}

/**
 * Checks every field with a grammar in `fields` (and each `deployment_config` entry), naming a
 * failure by `param(field)`: a header name in direct mode, a config path, a body field.
 *
 * @example
 *   const bad = checkProviderFields(target.providerOptions ?? {}, (f) => `config.targets[0].${f}`);
 *   if (bad) throw bad;
 */
export function checkProviderFields(fields: Readonly<Record<string, unknown>>, param: (field: string) => string): GatewayError | null {
  for (const name in fields) {
    if (name === 'deployment_config') {
      const entries = fields[name];
      if (!Array.isArray(entries)) continue;
      for (const [i, entry] of entries.entries()) {
        if (typeof entry !== 'object' || entry === null) continue;
        const e = entry as Record<string, unknown>;
        const bad =
          checkProviderField('deployment_name', e.deployment_name, param(`deployment_config[${i}].deployment_name`)) ??
          checkProviderField('api_version', e.api_version, param(`deployment_config[${i}].api_version`));
        if (bad !== null) return bad;
      }
      continue;
    }
    if (!URL_FIELDS.has(name)) continue;
    const bad = checkProviderField(name, fields[name], param(name));
    if (bad !== null) return bad;
  }
  return null;
}

/** Throws the 400 when a field an adapter is about to put in a URL is outside its grammar. */
export function assertProviderField(name: string, value: string | undefined, param: string = name): void {
  const bad = checkProviderField(name, value, param);
  if (bad !== null) throw bad;
}
