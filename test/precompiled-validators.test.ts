/**
 * The gateway's own schemas (requests, config, the standard plugins' options, and the meta-schema
 * that checks plugins' schemas) are validated by code generated at build time
 * (cli/build-validators.ts), used only when its fingerprint matches the schema it was made from
 * (core/validation/precompiled.ts). The build must have made them, they must answer exactly as the
 * schemas compiled at run time do, and a stale one must not be used.
 */
import t from 'tap';
import { createRequestValidator, requestSchemas, REQUEST_AJV_OPTIONS } from '../core/validation/index.js';
import { fingerprint, precompiled } from '../core/validation/precompiled.js';
import { configValidator, loadConfigText } from '../core/config/load.js';
import { schemaProblem } from '../core/validation/schema-check.js';
import { optionsAjv, PLUGIN_OPTIONS_AJV_OPTIONS, resolvePlugins } from '../core/plugin-loader.js';
import { standardPlugins } from '../plugins/index.js';
import type { GatewayError } from '../core/errors.js';
import type { ModelRoute } from '../core/routes.js';

t.test('the build generated both validators, and the gateway uses them', async (t) => {
  t.equal(createRequestValidator().source, 'generated', 'the request schemas (run `npm run build`, not tsc alone)');
  t.equal(configValidator().source, 'generated', 'the config schema');
  t.equal(createRequestValidator({ precompiled: false }).source, 'compiled');
  t.equal(configValidator({ precompiled: false }).source, 'compiled');
  for (const [name, load] of Object.entries(standardPlugins)) {
    const schema = (await load()).default.configSchema;
    if (schema !== undefined) t.ok(precompiled(`plugin-${name}`, fingerprint(PLUGIN_OPTIONS_AJV_OPTIONS, schema)), `plugin ${name}'s option schema`);
  }
});

type Json = Record<string, unknown>;

const BASE: Record<ModelRoute, Json> = {
  'chat.completions': { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 1, tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'auto', stream: true, stream_options: { include_usage: true } },
  completions: { model: 'm', prompt: 'hi', max_tokens: 5, logprobs: 1 },
  embeddings: { model: 'm', input: ['a', 'b'], dimensions: 8 },
  moderations: { model: 'm', input: 'hi' },
  responses: { model: 'm', input: [{ role: 'user', content: 'hi' }], max_output_tokens: 20, tools: [{ type: 'function', name: 'f' }] },
  messages: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], thinking: { type: 'enabled', budget_tokens: 2048 } },
  'messages.count_tokens': { model: 'm', messages: [{ role: 'user', content: 'hi' }], system: 'be brief' },
};

/** Values of every JSON type and the edges the schemas bound. */
const PROBES: unknown[] = [null, true, -3, 0, 0.5, 2.5, 5000, 'x', '', 'auto', [], ['a'], [{}], {}, { type: 'function' }, { type: 'x', name: '' }];

/** The body with the value at `path` replaced (or removed when `value` is undefined). */
function withValue(body: unknown, path: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(body) as Json;
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

/** Every path into a body, objects' members and arrays' items, and the schema's top-level properties. */
function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return [];
  const out: Array<Array<string | number>> = [];
  for (const [key, child] of Object.entries(value)) {
    const path = [...at, Array.isArray(value) ? Number(key) : key];
    out.push(path, ...paths(child, path));
  }
  return out;
}

function answer(err: GatewayError | null): unknown {
  return err === null ? null : { code: err.code, param: err.param, message: err.message, status: err.status };
}

t.test('a generated request validator answers as the compiled schema does', async (t) => {
  const generated = createRequestValidator();
  const compiled = createRequestValidator({ precompiled: false });
  const schemas = requestSchemas();
  let compared = 0;
  let refused = 0;
  const differing: string[] = [];
  for (const route of Object.keys(BASE) as ModelRoute[]) {
    const base = BASE[route];
    const bodies: unknown[] = [base];
    const members = Object.keys((schemas[route] as { properties?: Json }).properties ?? {});
    for (const path of [...paths(base), ...members.map((m) => [m])]) {
      bodies.push(withValue(base, path, undefined));
      for (const probe of PROBES) bodies.push(withValue(base, path, probe));
    }
    for (const body of bodies) {
      const a = answer(generated(route, body));
      const b = answer(compiled(route, body));
      compared++;
      if (a !== null) refused++;
      if (JSON.stringify(a) !== JSON.stringify(b)) differing.push(`${route} ${JSON.stringify(body)}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`);
    }
  }
  t.same(differing, [], `${compared} bodies, ${refused} refused, answered alike`);
  t.ok(compared > 1000 && refused > 500, `the corpus exercises both outcomes (${compared} bodies, ${refused} refused)`);
  t.equal(answer(generated('chat.completions', BASE['chat.completions'])), null, 'a valid chat completion passes');
});

t.test('the generated config validator reports and defaults as the compiled one', async (t) => {
  const generated = configValidator().validate;
  const compiled = configValidator({ precompiled: false }).validate;
  const configs: unknown[] = [
    {},
    { server: { port: 'x' } },
    { server: { port: 70000, host: 3 }, pipeline: 'logging' },
    { upstream: { request_timeout: '10 parsecs' }, unknown_section: true },
    { pipeline: ['logging', { auth: { keys: 3 } }, { a: 1, b: 2 }] },
    { store: { path: '/tmp/x', map_size: '2gb' }, server: { body_limit: -1 } },
  ];
  for (const config of configs) {
    const a = structuredClone(config);
    const b = structuredClone(config);
    const okA = generated(a);
    const okB = compiled(b);
    t.equal(okA, okB, `valid alike: ${JSON.stringify(config)}`);
    t.same(generated.errors ?? null, compiled.errors ?? null, 'the same errors, parent schemas included');
    t.same(a, b, 'the same defaults applied');
  }
  // Through the loader: the problems a person reads.
  const loaded = loadConfigText('server: {port: nope}\nupstream: {request_timeout: 10 parsecs}\n', '/tmp/gw.yaml');
  t.match(
    loaded.problems.map((p) => `${p.line}:${p.path}`),
    ['1:server.port', '2:upstream.request_timeout'],
    'the loader still places each problem on its line',
  );
});

t.test('a generated module is used only for what it was made from', async (t) => {
  const schemas = requestSchemas();
  const print = fingerprint(REQUEST_AJV_OPTIONS, schemas);
  t.ok(precompiled('request', print), 'the current fingerprint finds the module');
  t.equal(precompiled('request', fingerprint(REQUEST_AJV_OPTIONS, { ...schemas, embeddings: { type: 'object' } })), undefined, 'an edited schema does not');
  t.equal(precompiled('request', fingerprint({ ...REQUEST_AJV_OPTIONS, coerceTypes: true }, schemas)), undefined, 'other ajv options do not');
  t.equal(precompiled('no-such-module', print), undefined, 'a missing module is no module');
});

t.test('the generated meta-schema checks plugins\' schemas as ajv does', async (t) => {
  const schemas: unknown[] = [
    {},
    true,
    { type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] },
    { type: 'object', properties: { n: { type: 'integr' } } },
    { required: 'name' },
    { type: ['string', 'nope'], minLength: -1, enum: [] },
    { properties: { a: { $ref: '#/definitions/x' } }, definitions: { x: { type: 'string', pattern: 3 } } },
    { $schema: 'http://json-schema.org/draft-07/schema#', items: [{ type: 'string' }, { maxItems: 'two' }], additionalItems: false },
    { anyOf: [], oneOf: [{}], allOf: [{ not: { const: 1 } }], if: { type: 'string' }, then: { format: 3 } },
    { dependencies: { a: ['b', 'b'], c: { type: 'x' } }, propertyNames: { maxLength: 1.5 } },
  ];
  for (const schema of schemas) t.equal(schemaProblem(schema), schemaProblem(schema, { compiled: true }), JSON.stringify(schema));
  t.match(schemaProblem({ type: 'object', properties: { n: { type: 'integr' } } }), /^data\/properties\/n\/type /, 'in ajv\'s words');
  const other = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' };
  t.throws(() => schemaProblem(other), /no schema with key or ref/, 'another $schema goes to ajv, which knows only draft-07');
});

t.test('a standard plugin\'s generated option validator checks and defaults as the compiled one', async (t) => {
  const ajv = optionsAjv();
  const probes: unknown[] = [{}, { flush_ms: 'soon', max_records: -1 }, { keys: 3, unknown_option: true }, { window: '1m', limits: [{}] }, { dir: 7, redirect_root: 'no' }];
  for (const [name, load] of Object.entries(standardPlugins)) {
    const schema = (await load()).default.configSchema;
    if (schema === undefined) continue;
    const generated = precompiled<ReturnType<typeof ajv.compile>>(`plugin-${name}`, fingerprint(PLUGIN_OPTIONS_AJV_OPTIONS, schema))!;
    const compiled = ajv.compile(schema);
    for (const probe of probes) {
      const a = structuredClone(probe);
      const b = structuredClone(probe);
      const same = generated(a) === compiled(b) && JSON.stringify(generated.errors ?? null) === JSON.stringify(compiled.errors ?? null) && JSON.stringify(a) === JSON.stringify(b);
      if (!same) t.fail(`${name} ${JSON.stringify(probe)}: ${JSON.stringify(generated.errors)} / ${JSON.stringify(a)} against ${JSON.stringify(compiled.errors)} / ${JSON.stringify(b)}`);
    }
  }
  t.pass('every standard plugin alike on every probe');
  // A custom plugin (no generated module) is still checked against the meta-schema and compiled at boot.
  const { loadConfigText: load } = await import('../core/config/load.js');
  const loaded = load('pipeline: [{widget: {size: big}}]\n', '/tmp/gw.yaml');
  const widget = { default: { name: 'widget', configSchema: { type: 'object', properties: { size: { type: 'integer' } } }, setup: () => ({}) } };
  await t.rejects(resolvePlugins(loaded.config!, loaded.locate, { widget: async () => widget as never }), /size: must be integer/, 'a custom plugin\'s options are still validated');
  const broken = { default: { ...widget.default, configSchema: { type: 'object', properties: { size: { type: 'integr' } } } } };
  await t.rejects(resolvePlugins(loaded.config!, loaded.locate, { widget: async () => broken as never }), /invalid configSchema: schema is invalid: data\/properties\/size\/type/, 'and its schema still checked');
});
