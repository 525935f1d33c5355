/**
 * OpenAI's error bodies, as the real API sends them:
 *
 *   {"error":{"message":"…","type":"…","param":null,"code":"…"|null}}
 *
 * Types and codes are copied from real responses (401 `invalid_api_key`, 429 type `requests`
 * with code `rate_limit_exceeded`, 500 `server_error` with a null code) because gateways and
 * SDKs branch on them.
 */

import type { Dialect, JsonReply } from './route.js';

interface OpenAIErrorShape {
  readonly type: string;
  readonly code: string | null;
  readonly message: (model: string) => string;
}

const CATALOG: ReadonlyMap<number, OpenAIErrorShape> = new Map<number, OpenAIErrorShape>([
  [400, { type: 'invalid_request_error', code: null, message: () => 'Invalid request.' }],
  [
    401,
    {
      type: 'invalid_request_error',
      code: 'invalid_api_key',
      message: () =>
        'Incorrect API key provided: sk-mock****. You can find your API key at https://platform.openai.com/account/api-keys.',
    },
  ],
  [
    403,
    {
      type: 'request_forbidden',
      code: 'unsupported_country_region_territory',
      message: () => 'Country, region, or territory not supported',
    },
  ],
  [
    404,
    {
      type: 'invalid_request_error',
      code: 'model_not_found',
      message: (model) => `The model \`${model}\` does not exist or you do not have access to it.`,
    },
  ],
  [
    429,
    {
      type: 'requests',
      code: 'rate_limit_exceeded',
      message: (model) =>
        `Rate limit reached for requests per min (RPM) on ${model} in organization org-mock: Limit 3, Used 3, Requested 1. Please try again in 20s.`,
    },
  ],
  [
    500,
    {
      type: 'server_error',
      code: null,
      message: () => 'The server had an error while processing your request. Sorry about that!',
    },
  ],
  [502, { type: 'server_error', code: 'bad_gateway', message: () => 'Bad gateway.' }],
  [
    503,
    {
      type: 'server_error',
      code: 'service_unavailable',
      message: () => 'The server is overloaded or not ready yet.',
    },
  ],
  [504, { type: 'server_error', code: 'gateway_timeout', message: () => 'Gateway timeout.' }],
]);

const CLIENT_FALLBACK: OpenAIErrorShape = {
  type: 'invalid_request_error',
  code: null,
  message: () => 'Invalid request.',
};
const SERVER_FALLBACK: OpenAIErrorShape = {
  type: 'server_error',
  code: null,
  message: () => 'The server had an error while processing your request. Sorry about that!',
};

/** OpenAI's error body for `status`. */
export function openaiErrorBody(status: number, model = 'gpt-4o-mini'): { error: Record<string, unknown> } {
  const shape = CATALOG.get(status) ?? (status >= 500 ? SERVER_FALLBACK : CLIENT_FALLBACK);
  return { error: { message: shape.message(model), type: shape.type, param: null, code: shape.code } };
}

/** A 400 for a request OpenAI would reject, e.g. a missing required field. */
export function openaiBadRequest(message: string, param: string | null, code: string | null = null): JsonReply {
  return {
    kind: 'json',
    status: 400,
    body: { error: { message, type: 'invalid_request_error', param, code } },
  };
}

/** A missing-field 400 with OpenAI's exact wording. */
export function openaiMissing(param: string): JsonReply {
  return openaiBadRequest(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

/** The SSE frame OpenAI sends when a chat or completion stream fails after it started. */
export const OPENAI_STREAM_ERROR_FRAME = `event: error\ndata: ${JSON.stringify(openaiErrorBody(500))}\n\n`;

export const openaiDialect: Dialect = {
  name: 'openai',
  errorReply(status, model) {
    return { kind: 'json', status, body: openaiErrorBody(status, model) };
  },
  invalidJson() {
    return openaiBadRequest(
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
      null,
    );
  },
};
