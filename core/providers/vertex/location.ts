/**
 * Where a Vertex AI call goes: the regional endpoint and the project/location prefix.
 *
 *   https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}
 *     + /publishers/google/models/{model}:generateContent      (translator's path)
 *   region `global` → https://aiplatform.googleapis.com/v1/…
 *
 * A custom host replaces `https://…googleapis.com/v1` (so `http://127.0.0.1:9300/v1` for a mock,
 * or a private endpoint); the project and location still come from the fields, which pass their
 * URL grammar (core/providers/fields.ts) before they are joined in.
 */
import { Errors } from '../../errors.js';
import type { Target } from '../../router/types.js';
import { assertProviderField } from '../fields.js';
import type { UrlInput } from '../types.js';

function field(target: Target, name: string): string | undefined {
  const v = target.providerOptions?.[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function required(target: Target, name: 'vertex_project_id' | 'vertex_region'): string {
  const value = field(target, name);
  if (value === undefined) {
    const header = `x-gateway-${name.replace(/_/g, '-')}`;
    throw Errors.invalidProviderField(`Vertex AI needs ${name} (the ${header} header in direct mode).`, { param: name });
  }
  assertProviderField(name, value);
  return value;
}

/** The API host of a region: `global` has no regional prefix. */
export function vertexHost(region: string): string {
  return region === 'global' ? 'aiplatform.googleapis.com' : `${region}-aiplatform.googleapis.com`;
}

/** The full URL of a Vertex AI call (the translator's path is `/publishers/…`). */
export function vertexUrl({ target, upstreamPath, search }: UrlInput): string {
  const region = required(target, 'vertex_region');
  const base = (target.customHost ?? `https://${vertexHost(region)}/v1`).replace(/\/+$/, '');
  // A pass-through call names its own `/projects/…` path; a translated one starts at the publisher.
  if (!upstreamPath.startsWith('/publishers/')) return base + upstreamPath + search;
  const project = required(target, 'vertex_project_id');
  return `${base}/projects/${project}/locations/${region}${upstreamPath}${search}`;
}

/**
 * A model name as a path segment. Vertex names Claude versions with `@` (`claude-sonnet-4@20250514`),
 * which is a legal path character and is how Google's docs write it, so it stays unescaped.
 */
export function modelSegment(model: unknown): string {
  const name = typeof model === 'string' ? model.replace(/^(?:publishers\/[^/]+\/)?models\//, '') : '';
  return encodeURIComponent(name).replace(/%40/g, '@');
}
