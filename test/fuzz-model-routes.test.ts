/**
 * Fuzz: the model routes over real HTTP, against one gateway (standard pipeline, auth on) in direct
 * mode to the mock upstream. Random JSON values, valid bodies with hostile fields, bytes that are
 * not JSON, wrong content types and odd headers; every answer keeps the contract of
 * test/helpers/fuzz.ts `checkAnswer` (no gateway 5xx, one error shape, no echoed input) and the
 * gateway stays healthy. Settings: FUZZ_SEED, FUZZ_RUNS, FUZZ_SHRINK.
 */
import t from 'tap';
import fc from 'fast-check';
import {
  ODD_CONTENT_TYPES,
  applyMutations,
  exchangeAndCheck,
  headerSafe,
  hostileString,
  invalidJsonBytes,
  jsonValue,
  mutations,
  property,
  startFuzzTarget,
  toJsonText,
  type Fuzzed,
  type Mutation,
} from './helpers/fuzz.js';

type Path = ReadonlyArray<string | number>;

interface ModelRoute {
  path: string;
  /** A body the route accepts. */
  valid: Fuzzed;
  /** Fields worth breaking (paths may go below fields the valid body lacks). */
  fields: Path[];
}

const COMMON: Path[] = [['model'], ['stream'], ['temperature'], ['top_p'], ['n'], ['max_tokens'], ['stop'], ['metadata'], ['metadata', 'k'], ['user'], ['seed']];

const ROUTES: ModelRoute[] = [
  {
    path: '/v1/chat/completions',
    valid: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
    fields: [
      ...COMMON,
      ['messages'], ['messages', 0], ['messages', 0, 'role'], ['messages', 0, 'content'], ['messages', 0, 'name'],
      ['messages', 0, 'content', 0], ['messages', 0, 'content', 0, 'type'], ['messages', 0, 'content', 0, 'text'],
      ['messages', 0, 'content', 0, 'image_url', 'url'], ['messages', 0, 'tool_calls'], ['messages', 1],
      ['max_completion_tokens'], ['stream_options'], ['stream_options', 'include_usage'], ['tools'], ['tools', 0, 'function', 'name'],
      ['tools', 0, 'function', 'parameters'], ['tool_choice'], ['tool_choice', 'function', 'name'], ['logit_bias'], ['logit_bias', '50256'],
      ['response_format'], ['response_format', 'type'], ['presence_penalty'], ['frequency_penalty'], ['logprobs'], ['top_logprobs'],
    ],
  },
  {
    path: '/v1/completions',
    valid: { model: 'gpt-3.5-turbo-instruct', prompt: 'hello' },
    fields: [...COMMON, ['prompt'], ['prompt', 0], ['best_of'], ['echo'], ['logprobs'], ['suffix'], ['logit_bias', '50256']],
  },
  {
    path: '/v1/embeddings',
    valid: { model: 'text-embedding-3-small', input: 'hello' },
    fields: [['model'], ['input'], ['input', 0], ['input', 0, 0], ['dimensions'], ['encoding_format'], ['user']],
  },
  {
    path: '/v1/moderations',
    valid: { input: 'hello' },
    fields: [['model'], ['input'], ['input', 0], ['input', 0, 'type'], ['input', 0, 'text'], ['input', 0, 'image_url', 'url']],
  },
  {
    path: '/v1/responses',
    valid: { model: 'gpt-4o-mini', input: 'hello' },
    fields: [
      ['model'], ['input'], ['input', 0], ['input', 0, 'role'], ['input', 0, 'content'], ['input', 0, 'content', 0, 'type'],
      ['instructions'], ['max_output_tokens'], ['tools'], ['tool_choice'], ['metadata'], ['metadata', 'k'], ['stream'],
      ['temperature'], ['text'], ['text', 'format'], ['reasoning'], ['previous_response_id'], ['store'], ['truncation'],
    ],
  },
  {
    path: '/v1/messages',
    valid: { model: 'claude-3-5-sonnet-latest', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
    fields: [
      ['model'], ['max_tokens'], ['messages'], ['messages', 0, 'role'], ['messages', 0, 'content'], ['messages', 0, 'content', 0, 'type'],
      ['messages', 0, 'content', 0, 'text'], ['system'], ['system', 0, 'text'], ['stop_sequences'], ['temperature'], ['top_k'], ['top_p'],
      ['tools'], ['tool_choice'], ['metadata'], ['metadata', 'user_id'], ['stream'], ['thinking'], ['thinking', 'budget_tokens'],
    ],
  },
];

t.test('fuzz: model routes', async (t) => {
  const target = await startFuzzTarget(t);
  const json = { ...target.headers, 'content-type': 'application/json' };
  const route = fc.constantFrom(...ROUTES);

  await property(t, 'random JSON values as bodies', { target }, fc.tuple(route, jsonValue()), ([r, body]) =>
    exchangeAndCheck(target, { method: 'POST', path: r.path, headers: json, body: toJsonText(body) }),
  );

  const mutated = route.chain((r) => mutations(r.fields).map((m): [ModelRoute, Mutation[]] => [r, m]));
  await property(t, 'valid bodies with hostile fields', { target, weight: 3 }, mutated, ([r, changes]) =>
    exchangeAndCheck(target, { method: 'POST', path: r.path, headers: json, body: toJsonText(applyMutations(r.valid, changes)) }),
  );

  await property(t, 'bytes that are not JSON', { target }, fc.tuple(route, invalidJsonBytes), ([r, bytes]) =>
    exchangeAndCheck(target, { method: 'POST', path: r.path, headers: json, body: bytes }),
  );

  const contentType = fc.option(fc.constantFrom(...ODD_CONTENT_TYPES), { nil: undefined });
  await property(t, 'wrong content types', { target }, fc.tuple(route, contentType), ([r, type]) => {
    const headers: Record<string, string> = { ...target.headers };
    if (type !== undefined) headers['content-type'] = type;
    return exchangeAndCheck(target, { method: 'POST', path: r.path, headers, body: toJsonText(r.valid) });
  });

  // Headers a client may add to a valid request: the gateway's own with hostile values, ordinary
  // ones with odd values, unknown ones, and repeats.
  const value = hostileString(4_000).map(headerSafe);
  const gatewayHeader = fc.constantFrom(
    'x-gateway-api-key', 'x-gateway-trace-id', 'x-gateway-span-id', 'x-gateway-parent-span-id', 'x-gateway-span-name',
    'x-gateway-metadata', 'x-gateway-cache-namespace', 'x-gateway-cache-force-refresh', 'x-gateway-request-timeout',
    'x-gateway-forward-headers', 'x-gateway-strict-provider-compliance', 'accept', 'accept-encoding', 'content-encoding',
    'accept-language', 'authorization', 'traceparent', 'user-agent', 'origin', 'range', 'if-none-match',
  );
  const headerName = fc.oneof(gatewayHeader, fc.stringMatching(/^x-[a-z0-9-]{1,24}$/));
  const headerValue = fc.oneof(
    value,
    fc.constantFrom('', ' ', 'gzip', 'br, gzip;q=0', 'true', 'false', '-1', '0', '1e999', 'NaN', '{}', '[]', 'null', 'host, authorization', 'text/event-stream'),
    fc.array(value, { minLength: 2, maxLength: 3 }),
  );
  const oddHeaders = fc.dictionary(headerName, headerValue, { minKeys: 1, maxKeys: 4 });
  await property(t, 'odd headers on a valid request', { target }, fc.tuple(route, oddHeaders), ([r, extra]) => {
    const headers: Record<string, string | string[]> = { ...json, ...extra };
    const timeoutGiven = Object.keys(extra).includes('x-gateway-request-timeout');
    return exchangeAndCheck(target, { method: 'POST', path: r.path, headers, body: toJsonText(r.valid) }, timeoutGiven);
  });
});
