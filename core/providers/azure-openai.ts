/**
 * Azure OpenAI: the OpenAI wire format behind Azure's URLs and auth.
 *
 *   deployment form  https://<resource>.openai.azure.com/openai/deployments/<deployment>/<path>?api-version=<v>
 *   v1 form          https://<resource>.openai.azure.com/openai/v1/<path>     (api_version "v1" or none with no deployment)
 *
 * Fields (from a virtual key's provider fields, a config target, or `x-gateway-azure-*` headers):
 * `resource_name`, `deployment_name` (alias `deployment_id`), `api_version`; a `custom_host`
 * replaces `https://<resource>.openai.azure.com`. Auth: the `api-key` header, or an Entra ID bearer
 * token when `auth_mode` is `entra` (the key is then the token). Field grammar: `fields.ts`.
 */
import type { ProviderAdapter, UrlInput } from './types.js';
import type { Target } from '../router/types.js';
import { Errors } from '../errors.js';
import { assertProviderField } from './fields.js';
import { OPENAI_NATIVE_ROUTES } from './openai.js';

const DEFAULT_API_VERSION = '2024-10-21';

function field(target: Target, ...names: string[]): string | undefined {
  const o = target.providerOptions ?? {};
  for (const n of names) {
    const v = o[n] ?? o[`azure_${n}`];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

function azureUrl(input: UrlInput): string {
  const { target, upstreamPath, search } = input;
  const resource = field(target, 'resource_name');
  // Each field is checked by its grammar before it becomes part of the URL (a stored or header
  // value like `127.0.0.1:9300/` would otherwise move the host).
  assertProviderField('resource_name', resource);
  const base = (target.customHost ?? (resource ? `https://${resource}.openai.azure.com` : undefined))?.replace(/\/+$/, '');
  if (base === undefined) {
    throw Errors.invalidHeader('Azure OpenAI needs resource_name (or a custom host).', { param: 'x-gateway-azure-resource-name' });
  }
  const deployment = field(target, 'deployment_name', 'deployment_id');
  const version = field(target, 'api_version');
  assertProviderField('deployment_name', deployment);
  assertProviderField('api_version', version);
  const query = search.length > 1 ? `&${search.slice(1)}` : '';
  if (deployment === undefined || version === 'v1') {
    return `${base}/openai/v1${upstreamPath}${search}`;
  }
  return `${base}/openai/deployments/${encodeURIComponent(deployment)}${upstreamPath}?api-version=${encodeURIComponent(version ?? DEFAULT_API_VERSION)}${query}`;
}

export const azureOpenAI: ProviderAdapter = {
  id: 'azure-openai',
  baseUrl: 'https://openai.azure.com',
  url: azureUrl,
  // Azure serves the Responses API itself (`/openai/v1/responses`, or a deployment's `/responses`).
  nativeRoutes: OPENAI_NATIVE_ROUTES,
  authHeaders(target): Record<string, string> {
    if (target.apiKey === undefined) return {};
    return field(target, 'auth_mode') === 'entra' ? { authorization: `Bearer ${target.apiKey}` } : { 'api-key': target.apiKey };
  },
};
