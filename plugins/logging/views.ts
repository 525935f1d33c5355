/**
 * Response schemas of the log routes. The admin framework serializes with them
 * (fast-json-stringify), so only the fields listed here ever leave.
 */
import { S } from '../../core/index.js';

const nullableNum = { type: 'number', nullable: true };

const usageSchema = {
  type: 'object',
  nullable: true,
  properties: {
    prompt_tokens: S.int,
    completion_tokens: S.int,
    total_tokens: S.int,
    cached_tokens: S.int,
    reasoning_tokens: S.int,
    source: S.str,
  },
};

const fields: Record<string, S.JsonSchema> = {
  id: S.str,
  created_at: S.str,
  trace_id: S.str,
  span_id: S.strOrNull,
  parent_span_id: S.strOrNull,
  span_name: S.strOrNull,
  organisation_id: S.strOrNull,
  workspace_id: S.strOrNull,
  api_key_id: S.strOrNull,
  virtual_key: S.strOrNull,
  metadata: S.stringMap,
  method: S.str,
  path: S.str,
  route: S.str,
  provider: S.strOrNull,
  model: S.strOrNull,
  config: S.strOrNull,
  last_used_option_index: S.str,
  retry_count: S.int,
  cache_status: S.str,
  cache_wait_ms: nullableNum,
  guardrails: {
    type: 'object',
    nullable: true,
    properties: { verdict: S.str, passed: S.int, failed: S.int, redacted: S.int, results: S.anyObject },
  },
  stream: S.bool,
  status: S.int,
  is_success: S.bool,
  source: S.str,
  error_code: S.strOrNull,
  error_detail: S.strOrNull,
  aborted: S.bool,
  latency: S.record({ total_ms: S.num, upstream_ms: S.num, gateway_ms: S.num, ttfb_ms: nullableNum }),
  usage: usageSchema,
  cost_cents: S.num,
  priced_as: S.strOrNull,
  mcp: {
    type: 'object',
    nullable: true,
    description: 'The MCP message of a request on an MCP endpoint (`route: "mcp"`); absent on every other request.',
    properties: {
      server: S.strOrNull,
      method: S.strOrNull,
      tool: { ...S.strOrNull, description: 'The tool, prompt name or resource URI the call names.' },
      argument_bytes: S.int,
      outcome: { ...S.strOrNull, description: '`ok`, `error` (a JSON-RPC error or a tool result with `isError`), `denied` (refused by the gateway), `cancelled`.' },
      error_code: { type: 'integer', nullable: true, description: 'The JSON-RPC error code the client got, if any.' },
      upstream_ms: S.num,
    },
  },
  prompt_slug: { ...S.strOrNull, description: 'The stored prompt the request rendered; absent otherwise.' },
  prompt_version_id: { ...S.strOrNull, description: 'The prompt version it rendered; absent otherwise.' },
  request_body: S.strOrNull,
  response_body: S.strOrNull,
};

const OPTIONAL = new Set(['request_body', 'response_body', 'error_detail', 'cache_wait_ms', 'guardrails', 'mcp', 'prompt_slug', 'prompt_version_id']);

/** One request log (GET /v1/logs/:id, and each item of GET /v1/logs). */
export const logSchema = S.record(
  fields,
  // error_detail and cache_wait_ms are absent on records written before they existed; guardrails
  // on records of requests no guardrail applied to; mcp on every request but MCP ones; the prompt
  // fields on every request but those rendered from a stored prompt.
  Object.keys(fields).filter((k) => !OPTIONAL.has(k)),
);
