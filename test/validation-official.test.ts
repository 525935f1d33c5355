/**
 * Validation follows the official API, read from the installed `openai` package's request types:
 * every field its types accept as `null` passes as `null` (chat completions, completions,
 * embeddings, responses), and every chat tool kind its types list (function and GPT-5's custom
 * tools) passes to an OpenAI target; a provider that cannot run a kind refuses it by name.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import OpenAI from 'openai';
import { createRequestValidator, type ModelRoute } from '../core/validation/index.js';
import { startGateway, startMock, sdk } from './helpers/gateway.js';

const validate = createRequestValidator();
const resources = join(dirname(createRequire(import.meta.url).resolve('openai')), 'resources');

/** Top-level fields of an exported interface in a `.d.ts`, with their (possibly multi-line) type text. */
function fieldsOf(file: string, iface: string): Map<string, string> {
  const text = readFileSync(join(resources, file), 'utf8');
  const start = text.indexOf(`export interface ${iface} {`);
  if (start === -1) throw new Error(`${iface} not found in ${file}`);
  const lines = text.slice(start).split('\n');
  const fields = new Map<string, string>();
  let current: string | undefined;
  for (const line of lines.slice(1)) {
    if (line === '}') break;
    const field = /^ {4}(\w+)\??: (.*)$/.exec(line);
    if (field !== null) {
      current = field[1]!;
      fields.set(current, field[2]!);
    } else if (current !== undefined && /^ {4}(\}| {4})/.test(line) && !line.trimStart().startsWith('*') && !line.trimStart().startsWith('/')) {
      fields.set(current, `${fields.get(current)!} ${line.trim()}`);
    }
  }
  return fields;
}

/** Fields whose type accepts null (`… | null`, also after a multi-line object type). */
function nullable(fields: Map<string, string>): string[] {
  return [...fields].filter(([, type]) => /(^|\s|\|)null(;|\s*\||$)/.test(type) || /\| null;$/.test(type)).map(([name]) => name);
}

const ROUTES: Array<{ route: ModelRoute; file: string; iface: string; base: Record<string, unknown> }> = [
  { route: 'chat.completions', file: 'chat/completions/completions.d.ts', iface: 'ChatCompletionCreateParamsBase', base: { model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] } },
  { route: 'completions', file: 'completions.d.ts', iface: 'CompletionCreateParamsBase', base: { model: 'gpt-3.5-turbo-instruct', prompt: 'hi' } },
  { route: 'embeddings', file: 'embeddings.d.ts', iface: 'EmbeddingCreateParams', base: { model: 'text-embedding-3-small', input: 'hi' } },
  { route: 'responses', file: 'responses/responses.d.ts', iface: 'ResponseCreateParamsBase', base: { model: 'gpt-5', input: 'hi' } },
];

t.test('every field the official types accept as null is accepted as null', async (t) => {
  let total = 0;
  for (const { route, file, iface, base } of ROUTES) {
    const fields = fieldsOf(file, iface);
    t.ok(fields.size > 3, `${iface}: ${fields.size} fields read from the SDK`);
    for (const name of nullable(fields)) {
      total++;
      const err = validate(route, { ...base, [name]: null });
      t.equal(err, null, `${route}: ${name}: null passes${err === null ? '' : ` (got ${err.code} on ${String(err.param)})`}`);
    }
  }
  t.ok(total >= 40, `${total} nullable fields checked`);
  // The ones this gateway had wrong, by name (so a change in the parser above cannot hide them).
  t.equal(validate('completions', { model: 'm', prompt: null }), null, 'completions prompt: null');
  t.equal(validate('responses', { model: 'm', input: 'x', prompt: null }), null, 'responses prompt: null');
  t.equal(validate('responses', { prompt: { id: 'pmpt_1' } }), null, 'responses: the prompt supplies the model');
  t.match(validate('responses', { input: 'x' }), { code: 'missing_required_parameter', param: 'model' }, 'without a prompt, model is required');
  t.match(validate('responses', { model: 'm', prompt: null }), { code: 'missing_required_parameter', param: 'input' }, 'prompt: null supplies nothing');
});

t.test('chat tools: every kind the SDK lists passes; malformed ones still fail', async (t) => {
  const types = readFileSync(join(resources, 'chat/completions/completions.d.ts'), 'utf8');
  const union = /export type ChatCompletionTool = ([^;]+);/.exec(types)![1]!.split('|').map((s) => s.trim());
  t.same(union.sort(), ['ChatCompletionCustomTool', 'ChatCompletionFunctionTool'], 'the SDK lists function and custom tools');
  const chat = (extra: Record<string, unknown>) => ({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }], ...extra });
  const grammar = { type: 'custom', custom: { name: 'sql', description: 'A SQL query', format: { type: 'grammar', grammar: { syntax: 'lark', definition: 'start: "SELECT"' } } } };
  const rows: Array<[string, Record<string, unknown>, { code: string; param: string } | null]> = [
    ['a custom tool', { tools: [grammar] }, null],
    ['a custom tool with text format', { tools: [{ type: 'custom', custom: { name: 'free', format: { type: 'text' } } }] }, null],
    ['custom beside function tools', { tools: [{ type: 'function', function: { name: 'f' } }, grammar], tool_choice: { type: 'custom', custom: { name: 'sql' } } }, null],
    ['a custom tool without a name', { tools: [{ type: 'custom', custom: {} }] }, { code: 'missing_required_parameter', param: 'tools[0].custom.name' }],
    ['a custom tool without custom', { tools: [{ type: 'custom' }] }, { code: 'missing_required_parameter', param: 'tools[0].custom' }],
    ['a function tool without function', { tools: [{ type: 'function' }] }, { code: 'missing_required_parameter', param: 'tools[0].function' }],
    ['an unknown tool type', { tools: [{ type: 'retrieval' }] }, { code: 'invalid_value', param: 'tools[0].type' }],
  ];
  for (const [name, extra, expected] of rows) {
    const err = validate('chat.completions', chat(extra));
    if (expected === null) t.equal(err, null, `${name} passes`);
    else t.match(err, expected, `${name}: ${expected.code} on ${expected.param}`);
  }
});

t.test('through the gateway: custom tools reach OpenAI, translated providers refuse them by name', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);
  const tools = [{ type: 'custom' as const, custom: { name: 'sql', format: { type: 'text' as const } } }];
  await sdk(gw, mock).chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }], tools, max_tokens: null, stop: null, metadata: null });
  const sent = JSON.parse(mock.requests.at(-1)!.body.toString()) as { tools: unknown; max_tokens: unknown };
  t.same(sent.tools, tools, 'the custom tool went to OpenAI as sent');
  t.equal(sent.max_tokens, null, 'and the nulls with it');

  for (const provider of ['anthropic', 'google']) {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'k', maxRetries: 0, defaultHeaders: { 'x-gateway-provider': provider, 'x-gateway-custom-host': `${mock.url}/v1` } });
    const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools }).catch((e: unknown) => e);
    t.type(err, OpenAI.BadRequestError, provider);
    t.match((err as InstanceType<typeof OpenAI.APIError>).error, { code: 'unsupported_parameter', param: 'tools[0].type' }, `${provider} names the tool`);
  }
});
