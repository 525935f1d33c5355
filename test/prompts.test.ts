/**
 * The prompts plugin's admin API: CRUD, versions and publish, labels, partials, render (sections,
 * inverted sections, partials, no HTML escaping, missing variables), invalid templates, bad input
 * on every field, workspace isolation, scopes, audit records and OpenAPI.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, addWorkspace, insertKey, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { Scopes } from '../core/index.js';
import adminResources from '../plugins/admin-resources/index.js';
import prompts from '../plugins/prompts/index.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Answer {
  status: number;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function start(t: Teardown): Promise<{ gw: StartedGateway; call: (method: Method, path: string, body?: unknown, key?: string) => Promise<Answer> }> {
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-resources, prompts]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'admin-resources': adminResources, prompts },
  });
  const call = async (method: Method, path: string, body?: unknown, key = ADMIN_KEY): Promise<Answer> => {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: JSON.parse(await res.body.text()) as Record<string, unknown> };
  };
  return { gw, call };
}

const chat = [
  { role: 'system', content: 'You are {{persona}}.' },
  { role: 'user', content: 'Summarise: {{text}}' },
];

t.test('create, read, list, versions, publish, archive', async (t) => {
  const { call } = await start(t);
  const created = await call('POST', '/prompts', { name: 'Summary', template: chat, model: 'gpt-4o-mini', parameters: { temperature: 0.2, max_tokens: 100 }, provider: 'openai', version_description: 'first' });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.match(created.body, { id: /^[0-9a-f-]{36}$/, slug: /^pp-summary-/, version_id: /^[0-9a-f-]{36}$/, version: 1 });
  const { id, slug } = created.body as { id: string; slug: string };

  const got = await call('GET', `/prompts/${slug}`);
  t.equal(got.status, 200);
  t.match(got.body, { id, slug, name: 'Summary', version: 1, latest_version: 1, labels: {}, model: 'gpt-4o-mini', provider: 'openai', virtual_key: null, config: null, version_description: 'first', object: 'prompt' });
  t.same(got.body.template, chat);
  t.same(got.body.variables, ['persona', 'text']);
  t.same(got.body.required_variables, ['persona', 'text']);
  t.equal((await call('GET', `/prompts/${id}`)).body.slug, slug, 'found by id too');

  const list = await call('GET', '/prompts');
  t.match(list.body, { object: 'list', total: 1, data: [{ id, slug, version: 1 }] });

  // PUT makes version 2, the default stays 1.
  const v2 = await call('PUT', `/prompts/${slug}`, { template: [{ role: 'user', content: 'Short: {{text}}' }], version_description: 'shorter' });
  t.equal(v2.status, 200, JSON.stringify(v2.body));
  t.match(v2.body, { id, slug, version: 2 });
  const afterPut = await call('GET', `/prompts/${slug}`);
  t.match(afterPut.body, { version: 1, latest_version: 2 }, 'the default did not move');
  t.same(afterPut.body.template, chat);

  const rendered1 = await call('POST', `/prompts/${slug}/render`, { variables: { persona: 'terse', text: 'x' } });
  t.equal(rendered1.status, 200);
  t.same(rendered1.body.data.messages, [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Summarise: x' }], 'the default renders');
  const rendered2 = await call('POST', `/prompts/${slug}/render`, { variables: { text: 'x' }, version: 2 });
  t.same(rendered2.body.data, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Short: x' }], temperature: 0.2, max_tokens: 100 }, 'a version by number, parameters carried');

  const versions = await call('GET', `/prompts/${slug}/versions`);
  t.match(versions.body, { object: 'list', total: 2, data: [{ version: 2, is_default: false, description: 'shorter' }, { version: 1, is_default: true, description: 'first' }] });
  const one = await call('GET', `/prompts/${slug}/versions/1`);
  t.match(one.body, { id, version: 1, is_default: true, model: 'gpt-4o-mini' });
  t.equal((await call('GET', `/prompts/${slug}/versions/9`)).status, 404);
  t.match((await call('GET', `/prompts/${slug}/versions/abc`)).body, { error: { param: 'version' } });

  // Publish.
  t.equal((await call('PUT', `/prompts/${slug}/makeDefault`, { version: 2 })).status, 200);
  t.match((await call('GET', `/prompts/${slug}`)).body, { version: 2, version_id: v2.body.version_id });
  const old = await call('POST', `/prompts/${slug}/render`, { variables: { persona: 'p', text: 't' }, version: 1 });
  t.equal(old.body.data.messages[0].content, 'You are p.', 'an old version stays renderable by number');
  t.equal((await call('PUT', `/prompts/${slug}/makeDefault`, { version: 7 })).status, 404);

  // Diff.
  const diff = await call('GET', `/prompts/${slug}/diff?from=1&to=2`);
  t.equal(diff.status, 200);
  t.match(diff.body, { from: 1, to: 2, object: 'prompt_diff' });
  t.match(diff.body.patch, /-Summarise: \{\{text\}\}/);
  t.match(diff.body.patch, /\+Short: \{\{text\}\}/);
  t.ok(diff.body.changes.some((c: { op: string }) => c.op === 'add'));
  t.match((await call('GET', `/prompts/${slug}/diff?from=1`)).body, { error: { param: 'to' } });

  // Overrides.
  const over = await call('POST', `/prompts/${slug}/render`, { variables: { text: 'x' }, temperature: 1, model: 'gpt-4o' });
  t.match(over.body.data, { model: 'gpt-4o', temperature: 1, max_tokens: 100 });
  t.match((await call('POST', `/prompts/${slug}/render`, { variables: { text: 'x' }, messages: [] })).body, { error: { param: 'messages' } });

  // Archive.
  t.equal((await call('DELETE', `/prompts/${slug}`)).status, 200);
  t.equal((await call('GET', '/prompts')).body.total, 0);
  t.equal((await call('GET', '/prompts?status=archived')).body.total, 1);
  t.equal((await call('POST', `/prompts/${slug}/render`, { variables: { text: 'x' } })).status, 404);
});

t.test('labels', async (t) => {
  const { call } = await start(t);
  const { slug } = (await call('POST', '/prompts', { name: 'L', template: 'v1 {{a}}', model: 'm', provider: 'openai' })).body as { slug: string };
  await call('PUT', `/prompts/${slug}`, { template: 'v2 {{a}}' });
  t.equal((await call('PUT', `/prompts/${slug}/labels/staging`, { version: 2 })).status, 200);
  t.equal((await call('PUT', `/prompts/${slug}/labels/production`, { version: 1 })).status, 200);
  t.same((await call('GET', `/prompts/${slug}`)).body.labels, { staging: 2, production: 1 });
  t.equal((await call('POST', `/prompts/${slug}/render`, { variables: { a: 'x' }, label: 'staging' })).body.data.prompt, 'v2 x');
  t.equal((await call('POST', `/prompts/${slug}/render`, { variables: { a: 'x' }, label: 'production' })).body.data.prompt, 'v1 x');
  t.match((await call('POST', `/prompts/${slug}/render`, { variables: { a: 'x' }, label: 'nope' })), { status: 404, body: { error: { param: 'label' } } });
  t.match((await call('POST', `/prompts/${slug}/render`, { variables: { a: 'x' }, label: 'staging', version: 1 })), { status: 400, body: { error: { param: 'label' } } });
  t.match((await call('PUT', `/prompts/${slug}/labels/Bad!`, { version: 1 })), { status: 400, body: { error: { param: 'label' } } });
  t.match((await call('PUT', `/prompts/${slug}/labels/${'x'.repeat(33)}`, { version: 1 })), { status: 400, body: { error: { param: 'label' } } });
  t.match((await call('PUT', `/prompts/${slug}/labels/qa`, { version: 5 })), { status: 404, body: { error: { param: 'version' } } });
  t.match((await call('PUT', `/prompts/${slug}/labels/qa`, { version: 'one' })), { status: 400, body: { error: { param: 'version' } } });
  const versions = await call('GET', `/prompts/${slug}/versions`);
  t.same(versions.body.data.map((v: { labels: string[] }) => v.labels), [['staging'], ['production']]);
  t.equal((await call('DELETE', `/prompts/${slug}/labels/staging`)).status, 200);
  t.same((await call('GET', `/prompts/${slug}`)).body.labels, { production: 1 });
  t.equal((await call('DELETE', `/prompts/${slug}/labels/staging`)).status, 404);
});

t.test('templates: sections, inverted sections, partials, no HTML escaping, missing variables', async (t) => {
  const { call } = await start(t);
  const partial = await call('POST', '/prompts/partials', { name: 'Signature', slug: 'signature', content: '-- {{author}} <{{email}}>', version_description: 'v1' });
  t.equal(partial.status, 200, JSON.stringify(partial.body));
  t.match(partial.body, { slug: 'signature', version: 1 });
  const template =
    'Hello {{name}} & co.\n{{#items}}- {{title}} ({{price}})\n{{/items}}{{^items}}No items.\n{{/items}}{{#vip}}VIP!\n{{/vip}}Raw: {{{html}}} / {{html}} / {{&html}}\nData: {{data}}\n{{> signature}}';
  const created = await call('POST', '/prompts', { name: 'T', template, model: 'm', provider: 'openai' });
  t.equal(created.status, 200, JSON.stringify(created.body));
  const slug = created.body.slug as string;
  const got = (await call('GET', `/prompts/${slug}`)).body;
  t.same(got.variables, ['author', 'data', 'email', 'html', 'items', 'name', 'vip'], 'sections and partial variables included');
  t.same(got.required_variables, ['author', 'data', 'email', 'html', 'name'], 'section names are optional');
  t.same(got.partials, ['signature']);

  const vars = { name: 'Ann', html: '<b>"x"</b>', data: { k: [1, 2] }, author: 'Bob', email: 'b@x.io' };
  const full = await call('POST', `/prompts/${slug}/render`, { variables: { ...vars, items: [{ title: 'A', price: 1 }, { title: 'B<', price: 2.5 }], vip: true } });
  t.equal(full.status, 200, JSON.stringify(full.body));
  t.equal(
    full.body.data.prompt,
    'Hello Ann & co.\n- A (1)\n- B< (2.5)\nVIP!\nRaw: <b>"x"</b> / <b>"x"</b> / <b>"x"</b>\nData: {"k":[1,2]}\n-- Bob <b@x.io>',
  );
  const empty = await call('POST', `/prompts/${slug}/render`, { variables: { ...vars, items: [] } });
  t.match(empty.body.data.prompt, /No items\.\n/, 'inverted section on an empty list');
  t.notMatch(empty.body.data.prompt, /VIP/);

  // Missing variables: 400 naming them, including a partial's.
  const missing = await call('POST', `/prompts/${slug}/render`, { variables: { ...vars, name: undefined } });
  t.match(missing, { status: 400, body: { error: { code: 'missing_variable', param: 'variables.name' } } });
  t.match(missing.body.error.message, /"name"/);
  const { author: _a, ...noAuthor } = vars;
  t.match(await call('POST', `/prompts/${slug}/render`, { variables: noAuthor }), { status: 400, body: { error: { code: 'missing_variable', param: 'variables.author' } } });

  // Prototype names never resolve (no function is ever called).
  const proto = await call('POST', '/prompts', { name: 'P', template: '[{{#list}}{{map}}{{/list}}][{{constructor}}]', model: 'm', provider: 'openai' });
  t.match(await call('POST', `/prompts/${proto.body.slug}/render`, { variables: { list: [{ a: 1 }] } }), { status: 400, body: { error: { code: 'missing_variable', param: 'variables.constructor' } } });
  const noProto = await call('POST', '/prompts', { name: 'P2', template: '[{{#list}}{{map}}{{toString}}{{/list}}]', model: 'm', provider: 'openai' });
  t.equal((await call('POST', `/prompts/${noProto.body.slug}/render`, { variables: { list: [{ a: 1 }] } })).body.data.prompt, '[]');

  // A partial change applies at the next render (latest partial version).
  const upd = await call('PUT', '/prompts/partials/signature', { content: '== {{author}}', version_description: 'v2' });
  t.match(upd.body, { slug: 'signature', version: 2 });
  t.match((await call('POST', `/prompts/${slug}/render`, { variables: vars })).body.data.prompt, /\n== Bob$/);
  t.match((await call('GET', '/prompts/partials/signature/versions')).body, { total: 2, data: [{ version: 2, description: 'v2' }, { version: 1, content: '-- {{author}} <{{email}}>' }] });
  t.match((await call('GET', '/prompts/partials/signature')).body, { content: '== {{author}}', version: 2 });
  t.match((await call('GET', '/prompts/partials')).body, { total: 1, data: [{ slug: 'signature' }] });

  // Unknown partial at save; archived partial at render.
  t.match(await call('POST', '/prompts', { name: 'U', template: 'x {{> nope}}', model: 'm', provider: 'openai' }), { status: 400, body: { error: { code: 'unknown_partial', param: 'template' } } });
  t.match(await call('POST', '/prompts/partials', { name: 'U', content: '{{> nope}}' }), { status: 400, body: { error: { code: 'unknown_partial', param: 'content' } } });
  t.equal((await call('DELETE', '/prompts/partials/signature')).status, 200);
  t.match(await call('POST', `/prompts/${slug}/render`, { variables: vars }), { status: 400, body: { error: { code: 'unknown_partial' } } });

  // A partial including itself: a bounded 400, not a stack overflow.
  await call('POST', '/prompts/partials', { name: 'Loop', slug: 'loop', content: 'a{{> loop}}' });
  const loop = await call('POST', '/prompts', { name: 'Loop', template: '{{> loop}}', model: 'm', provider: 'openai' });
  t.equal(loop.status, 200);
  t.match(await call('POST', `/prompts/${loop.body.slug}/render`, { variables: {} }), { status: 400, body: { error: { code: 'invalid_template' } } });
});

t.test('invalid templates name the field and the line', async (t) => {
  const { call } = await start(t);
  const text = await call('POST', '/prompts', { name: 'Bad', template: 'line one\nline two {{#open}}\nline three', model: 'm', provider: 'openai' });
  t.match(text, { status: 400, body: { error: { code: 'invalid_template', param: 'template' } } });
  t.match(text.body.error.message, /line 3/);
  const unclosed = await call('POST', '/prompts', { name: 'Bad', template: 'a\nb {{oops', model: 'm', provider: 'openai' });
  t.match(unclosed, { status: 400, body: { error: { code: 'invalid_template', param: 'template' } } });
  t.match(unclosed.body.error.message, /line 2/);
  const msgs = await call('POST', '/prompts', { name: 'Bad', template: [{ role: 'system', content: 'ok' }, { role: 'user', content: '{{/x}}' }], model: 'm', provider: 'openai' });
  t.match(msgs, { status: 400, body: { error: { code: 'invalid_template', param: 'template[1].content' } } });
  t.match(msgs.body.error.message, /line 1/);
  const { slug } = (await call('POST', '/prompts', { name: 'Good', template: 'ok', model: 'm', provider: 'openai' })).body as { slug: string };
  t.match(await call('PUT', `/prompts/${slug}`, { template: '{{#a}}' }), { status: 400, body: { error: { code: 'invalid_template' } } });
  t.equal((await call('GET', `/prompts/${slug}`)).body.latest_version, 1, 'nothing saved');
  t.match(await call('POST', '/prompts/partials', { name: 'p', content: 'x\n{{#a}}{{/b}}' }), { status: 400, body: { error: { code: 'invalid_template', param: 'content' } } });
});

t.test('bad input on every field', async (t) => {
  const { call } = await start(t);
  const base = { name: 'N', template: 'hi {{x}}', model: 'm', provider: 'openai' };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...base, name: '' }, 'name'],
    [{ ...base, name: 5 }, 'name'],
    [{ ...base, slug: 'has space' }, 'slug'],
    [{ ...base, slug: 'partials' }, 'slug'],
    [{ ...base, template: '' }, 'template'],
    [{ ...base, template: 7 }, 'template'],
    [{ ...base, template: [] }, 'template'],
    [{ ...base, template: [{ role: 'wizard', content: 'x' }] }, 'template[0].role'],
    [{ ...base, template: [{ role: 'user' }] }, 'template[0].content'],
    [{ ...base, template: [{ role: 'user', content: 'x', extra: 1 }] }, 'template[0].extra'],
    [{ ...base, model: '' }, 'model'],
    [{ name: 'N', template: 'x', provider: 'openai' }, 'model'],
    [{ ...base, parameters: 'hot' }, 'parameters'],
    [{ ...base, parameters: { temperature: 3 } }, 'parameters.temperature'],
    [{ ...base, parameters: { max_tokens: 0 } }, 'parameters.max_tokens'],
    [{ ...base, parameters: { top_p: 2 } }, 'parameters.top_p'],
    [{ ...base, parameters: { model: 'x' } }, 'parameters.model'],
    [{ ...base, parameters: { messages: [] } }, 'parameters.messages'],
    [{ ...base, tools: 'x' }, 'tools'],
    [{ ...base, tools: ['x'] }, 'tools[0]'],
    [{ ...base, tool_choice: 5 }, 'tool_choice'],
    [{ ...base, response_format: 'json' }, 'response_format'],
    [{ ...base, provider: undefined }, 'virtual_key'],
    [{ ...base, config: 'pc-x' }, 'provider'],
    [{ ...base, provider: undefined, virtual_key: 'nope' }, 'virtual_key'],
    [{ ...base, provider: undefined, config: 'nope' }, 'config'],
    [{ ...base, provider: 'bad provider' }, 'provider'],
    [{ ...base, version_description: 'x'.repeat(1025) }, 'version_description'],
    [{ ...base, workspace_id: 'nope' }, 'workspace_id'],
    [{ ...base, unknown: 1 }, 'unknown'],
  ];
  for (const [body, param] of cases) {
    const res = await call('POST', '/prompts', body);
    t.ok(res.status === 400 || res.status === 404, `${param}: ${res.status}`);
    t.equal(res.body.error?.param, param, `POST names ${param}: ${JSON.stringify(res.body)}`);
  }
  const { slug } = (await call('POST', '/prompts', base)).body as { slug: string };
  t.match(await call('PUT', `/prompts/${slug}`, {}), { status: 400 });
  t.match(await call('PUT', `/prompts/${slug}`, { workspace_id: 'x' }), { status: 400, body: { error: { param: 'workspace_id' } } });
  t.match(await call('PUT', `/prompts/${slug}/makeDefault`, {}), { status: 400, body: { error: { param: 'version' } } });
  t.match(await call('PUT', `/prompts/${slug}/makeDefault`, { version: 0 }), { status: 400, body: { error: { param: 'version' } } });
  t.match(await call('POST', `/prompts/${slug}/render`, { variables: 'x' }), { status: 400, body: { error: { param: 'variables' } } });
  t.match(await call('POST', `/prompts/${slug}/render`, { variables: { x: 1 }, version: 'a' }), { status: 400, body: { error: { param: 'version' } } });
  t.match(await call('POST', `/prompts/${slug}/render`, { variables: { x: 1 }, temperature: 9 }), { status: 400, body: { error: { param: 'temperature' } } });
  t.match(await call('POST', `/prompts/${slug}/render`, { variables: { x: 1 }, prompt: 'y' }), { status: 400, body: { error: { param: 'prompt' } } });
  t.match(await call('GET', `/prompts/${slug}/diff?from=0&to=1`), { status: 400, body: { error: { param: 'from' } } });
  t.match(await call('POST', '/prompts/partials', { name: 'p' }), { status: 400, body: { error: { param: 'content' } } });
  t.match(await call('POST', '/prompts/partials', { name: 'p', content: '' }), { status: 400, body: { error: { param: 'content' } } });
  t.match(await call('GET', '/prompts/nope'), { status: 404 });
  // Targets that exist in the workspace are accepted.
  const cfg = await call('POST', '/configs', { name: 'c', config: { provider: 'openai' } });
  t.equal((await call('POST', '/prompts', { ...base, provider: undefined, config: cfg.body.slug })).status, 200);
  const vk = await call('POST', '/virtual-keys', { name: 'vk', provider: 'openai', key: 'sk-0123456789' });
  t.equal(vk.status, 200, JSON.stringify(vk.body));
  t.equal((await call('POST', '/prompts', { ...base, provider: undefined, virtual_key: vk.body.slug })).status, 200);
});

t.test('workspace isolation, scopes, audit, OpenAPI', async (t) => {
  const { gw, call } = await start(t);
  const a = addWorkspace(gw.store, 'ws-a', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const b = addWorkspace(gw.store, 'ws-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const created = await call('POST', '/prompts', { name: 'Mine', template: 'x', model: 'm', provider: 'openai' }, a.key);
  t.equal(created.status, 200, JSON.stringify(created.body));
  const slug = created.body.slug as string;
  t.equal(gw.store.c.prompts.get(created.body.id)!.workspace_id, a.id, 'implied by the workspace key');
  for (const [method, path, body] of [
    ['GET', `/prompts/${slug}`],
    ['PUT', `/prompts/${slug}`, { template: 'y' }],
    ['DELETE', `/prompts/${slug}`],
    ['GET', `/prompts/${slug}/versions`],
    ['GET', `/prompts/${slug}/versions/1`],
    ['PUT', `/prompts/${slug}/makeDefault`, { version: 1 }],
    ['PUT', `/prompts/${slug}/labels/x`, { version: 1 }],
    ['POST', `/prompts/${slug}/render`, { variables: {} }],
    ['GET', `/prompts/${slug}/diff?from=1&to=1`],
  ] as Array<[Method, string, unknown?]>) {
    t.equal((await call(method, path, body, b.key)).status, 404, `${method} ${path} from another workspace`);
  }
  t.equal((await call('GET', '/prompts', undefined, b.key)).body.total, 0, "another workspace's list is empty");
  t.equal((await call('GET', '/prompts', undefined, a.key)).body.total, 1);
  t.equal((await call('GET', `/prompts?workspace_id=${b.id}`)).body.total, 0, 'workspace filter');
  t.equal((await call('GET', `/prompts?workspace_id=${a.id}`)).body.total, 1);
  t.equal((await call('POST', '/prompts', { name: 'x', template: 'x', model: 'm', provider: 'openai', workspace_id: b.id }, a.key)).status, 403);

  // A partial of another workspace cannot be included.
  await call('POST', '/prompts/partials', { name: 'b-part', slug: 'b-part', content: 'B' }, b.key);
  t.match(await call('POST', '/prompts', { name: 'x', template: '{{> b-part}}', model: 'm', provider: 'openai' }, a.key), { status: 400, body: { error: { code: 'unknown_partial' } } });
  t.equal((await call('GET', '/prompts/partials/b-part', undefined, a.key)).status, 404);

  // Scopes: publish needs prompts.publish.
  const noPublish = insertKey(gw.store, { workspace_id: a.id, scopes: Scopes.DEFAULT_WORKSPACE_SCOPES.filter((s) => s !== 'prompts.publish') });
  t.match(await call('PUT', `/prompts/${slug}/makeDefault`, { version: 1 }, noPublish), { status: 403, body: { error: { code: 'insufficient_scope' } } });
  t.match(await call('PUT', `/prompts/${slug}/labels/prod`, { version: 1 }, noPublish), { status: 403 });
  t.equal((await call('PUT', `/prompts/${slug}/makeDefault`, { version: 1 }, a.key)).status, 200);
  const readOnly = insertKey(gw.store, { workspace_id: a.id, scopes: ['prompts.read', 'prompts.list'] });
  t.equal((await call('GET', `/prompts/${slug}`, undefined, readOnly)).status, 200);
  t.equal((await call('POST', `/prompts/${slug}/render`, { variables: {} }, readOnly)).status, 200);
  t.equal((await call('PUT', `/prompts/${slug}`, { template: 'z' }, readOnly)).status, 403);
  t.ok(Scopes.SHARED_SCOPES.includes('prompts.publish'));

  // Audit records: writes and publish, the refused one too; renders are not audited.
  await gw.store.flush();
  const audit = gw.store.c.audit.list().items.filter((r) => r.resource_type === 'prompts');
  const actions = audit.map((r) => `${r.action}:${r.response_status_code}`);
  t.ok(actions.includes('create:200'));
  t.ok(actions.includes('publish:200'));
  t.ok(actions.includes('publish:403'));
  t.ok(actions.includes('label:403'));
  t.notOk(actions.some((a) => a.startsWith('render')), 'renders are reads');

  const doc = (await request(`${gw.url}/v1/openapi.json`).then((r) => r.body.json())) as { paths: Record<string, Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  const { paths } = doc;
  t.same(Object.keys(paths['/v1/prompts'] ?? {}).sort(), ['get', 'post']);
  t.same(Object.keys(paths['/v1/prompts/{slug}'] ?? {}).sort(), ['delete', 'get', 'put']);
  for (const p of ['/v1/prompts/{slug}/versions', '/v1/prompts/{slug}/versions/{version}', '/v1/prompts/{slug}/diff', '/v1/prompts/partials/{slug}/versions']) t.ok(paths[p]?.get, p);
  t.ok(paths['/v1/prompts/{slug}/makeDefault']?.put);
  t.ok(paths['/v1/prompts/{slug}/render']?.post);
  t.same(Object.keys(paths['/v1/prompts/{slug}/labels/{label}'] ?? {}).sort(), ['delete', 'put']);
  t.same(Object.keys(paths['/v1/prompts/partials/{slug}'] ?? {}).sort(), ['delete', 'get', 'put']);
  t.match(paths['/v1/prompts/{slug}/makeDefault']!.put, { 'x-required-scope': 'prompts.publish' });
});
