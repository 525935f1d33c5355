/**
 * The admin side of guardrails through the auth plugin: saved guardrails (CRUD, versions, scopes,
 * workspace isolation, parameter errors naming the field), header values that never leave sealed
 * (reads, versions, lists, audit records, a masked value sent back), guardrail lists in saved
 * configs, guardrails named by API keys' and workspaces' defaults, the audit trail and the
 * OpenAPI document.
 *
 * The checks are this file's own (`test.maxLen`, `test.webhook`), registered through the
 * guardrails service by a small plugin, so nothing here depends on the built-in checks.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, addWorkspace, insertKey, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { defineCheck, definePlugin, maskSecret, Scopes, type PluginDefinition } from '../core/index.js';
import { unsealGuardrailChecks } from '../plugins/guardrails/secrets.js';
import { resolveConfig } from '../plugins/admin-resources/index.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Answer {
  status: number;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}
/** JSON text spliced into a body as is (for depths `JSON.stringify` cannot reach). */
class Raw {
  constructor(readonly text: string) {}
}

function toJson(body: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(body, (_k, v: unknown) => (v instanceof Raw ? `\u0000raw${raws.push(v.text) - 1}` : v));
  return text.replace(/"\\u0000raw(\d+)"/g, (_m, i: string) => raws[Number(i)]!);
}

type Call = (method: Method, path: string, body?: unknown, key?: string) => Promise<Answer>;

const maxLen = defineCheck<{ max: number }>({
  id: 'test.maxLen',
  description: 'Fails when the text is longer than max characters',
  parameters: { type: 'object', properties: { max: { type: 'integer', minimum: 0 } }, required: ['max'], additionalProperties: false },
  run: (ctx, p) => ({ verdict: ctx.text.length <= p.max }),
});

/** A webhook-like check: its `headers` carry credentials, as `default.webhook`'s do. */
const webhook = defineCheck<{ url: string; headers?: Record<string, string> }>({
  id: 'test.webhook',
  description: 'Asks a URL for a verdict',
  parameters: {
    type: 'object',
    properties: { url: { type: 'string', minLength: 1 }, headers: { type: 'object', additionalProperties: { type: 'string' } } },
    required: ['url'],
    additionalProperties: false,
  },
  run: () => ({ verdict: true }),
});

const testChecks = definePlugin({
  name: 'test-checks',
  setup(app) {
    const guardrails = app.service('guardrails');
    guardrails.register(maxLen);
    guardrails.register(webhook);
  },
}) as PluginDefinition<never>;

const PIPELINE = 'pipeline: [auth, guardrails, test-checks, admin-org, admin-api-keys, admin-resources]\n';

async function start(t: Teardown, yaml = PIPELINE): Promise<{ gw: StartedGateway; call: Call }> {
  const gw = await startGateway(t, { yaml, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins: { 'test-checks': testChecks } });
  const call: Call = async (method, path, body, key = ADMIN_KEY) => {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : toJson(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: JSON.parse(text) as Record<string, unknown>, text };
  };
  return { gw, call };
}

async function auditRecords(gw: StartedGateway): Promise<Array<Record<string, unknown>>> {
  await gw.store.flush();
  return gw.store.c.audit.list({ limit: 10_000 }).items as unknown as Array<Record<string, unknown>>;
}

const defaultWorkspaceId = (gw: StartedGateway): string => gw.store.meta.get('default_workspace_id') as string;

const SHORT = { 'test.maxLen': { max: 100 }, deny: true };
const HOOK_TOKEN = 'Bearer hook-SECRET-0123456789abcdef';
const HOOK_KEY = 'hk-SECRET-KEY-9876543210';
const withHeaders = (headers: Record<string, string>): Record<string, unknown> => ({ 'test.webhook': { url: 'https://hooks.example/verdict', headers }, on_error: 'allow' });

t.test('saved guardrails: create, read, versions, archive', async (t) => {
  const { gw, call } = await start(t);

  const created = await call('POST', '/guardrails', { name: 'No long answers', checks: [SHORT] });
  t.equal(created.status, 200);
  t.match(created.body, { id: /^[0-9a-f-]{36}$/, slug: /^gr-no-long-answers-[0-9a-f]{6}$/, version_id: /^[0-9a-f-]{36}$/, object: 'guardrail' });
  t.same(Object.keys(created.body).sort(), ['id', 'object', 'slug', 'version_id']);
  const { id, slug } = created.body as { id: string; slug: string };

  const got = await call('GET', `/guardrails/${slug}`);
  t.equal(got.status, 200);
  t.match(got.body, { id, slug, name: 'No long answers', status: 'active', workspace_id: defaultWorkspaceId(gw), version_id: created.body.version_id, object: 'guardrail' });
  t.same(got.body.checks, [SHORT], 'the checks come back as sent');
  t.equal((await call('GET', `/guardrails/${id}`)).body.slug, slug, 'found by id too');
  t.equal((await call('GET', '/guardrails/gr-nope')).status, 404);

  // Every update is a version, a rename too.
  const v2 = await call('PUT', `/guardrails/${slug}`, { name: 'Short answers' });
  t.equal(v2.status, 200);
  t.same(Object.keys(v2.body), ['version_id']);
  t.not(v2.body.version_id, created.body.version_id);
  const v3 = await call('PUT', `/guardrails/${slug}`, { checks: [{ 'test.maxLen': { max: 10 } }, SHORT] });
  t.equal(v3.status, 200);
  const versions = await call('GET', `/guardrails/${slug}/versions`);
  t.equal(versions.body.total, 3);
  t.same(versions.body.data.map((v: { version_id: string }) => v.version_id), [v3.body.version_id, v2.body.version_id, created.body.version_id], 'newest first');
  t.match(versions.body.data[2], { id, slug, name: 'No long answers', checks: [SHORT], object: 'guardrail' });
  t.match(versions.body.data[0], { name: 'Short answers', checks: [{ 'test.maxLen': { max: 10 } }, SHORT] });
  t.equal((await call('GET', `/guardrails/${slug}/versions?page_size=1&current_page=1`)).body.data[0].version_id, v2.body.version_id, 'paged');
  t.match((await call('GET', `/guardrails/${slug}`)).body, { name: 'Short answers', version_id: v3.body.version_id, checks: [{ 'test.maxLen': { max: 10 } }, SHORT] });

  // A taken slug is the configs' answer: 409 naming slug.
  const clash = await call('POST', '/guardrails', { name: 'again', slug, checks: [SHORT] });
  t.equal(clash.status, 409);
  t.match(clash.body.error, { code: 'conflict', param: 'slug' });
  t.equal(gw.store.c.guardrails.list().total, 1, 'nothing half-written');

  // Archive: gone from the default list, there with status=archived, and no longer resolvable.
  t.same((await call('DELETE', `/guardrails/${slug}`)).body, {});
  t.equal((await call('GET', '/guardrails')).body.total, 0);
  const archived = await call('GET', '/guardrails?status=archived');
  t.match(archived.body, { object: 'list', total: 1, data: [{ slug, status: 'archived' }] });
  t.notOk('checks' in archived.body.data[0], 'list items leave the checks out');
  t.equal((await call('GET', `/guardrails/${slug}/versions`)).body.total, 3, 'archiving keeps the versions');
  const named = await call('POST', '/configs', { name: 'c', config: { provider: 'openai', input_guardrails: [slug] } });
  t.match(named.body.error, { code: 'unknown_guardrail', param: 'config.input_guardrails[0]' }, 'an archived guardrail is not resolved');
  t.equal((await call('PUT', `/guardrails/${slug}`, { status: 'active' })).status, 200, 'and can be restored');
  t.equal((await call('POST', '/configs', { name: 'c', config: { provider: 'openai', input_guardrails: [slug] } })).status, 200);
});

t.test('saved guardrails: invalid checks are a 400 naming the field, before anything is written', async (t) => {
  const { gw, call } = await start(t);
  const cases: Array<[unknown, string, string]> = [
    [[{ 'nope.check': {} }], 'unknown_check', 'checks[0]["nope.check"]'],
    [[SHORT, { 'test.maxLen': { max: -1 } }], 'value_below_minimum', 'checks[1]["test.maxLen"].max'],
    [[{ 'test.maxLen': {} }], 'missing_required_parameter', 'checks[0]["test.maxLen"].max'],
    [[{ 'test.maxLen': { max: 3, min: 1 } }], 'unknown_parameter', 'checks[0]["test.maxLen"].min'],
    [[SHORT, 'gr-other'], 'invalid_type', 'checks[1]'],
    [[{ deny: true }], 'missing_required_parameter', 'checks[0]'],
    [[{ 'test.maxLen': { max: 1 }, deny: 'yes' }], 'invalid_type', 'checks[0].deny'],
    [[], 'too_few_items', 'checks'],
    [Array.from({ length: 33 }, () => SHORT), 'too_many_items', 'checks'],
  ];
  for (const [checks, code, param] of cases) {
    const res = await call('POST', '/guardrails', { name: 'bad', checks });
    t.equal(res.status, 400, param);
    t.match(res.body.error, { code, param }, `${code} at ${param}`);
  }
  // A saved guardrail that names another one is refused even when that one exists: no nesting, no cycles.
  const other = (await call('POST', '/guardrails', { name: 'other', checks: [SHORT] })).body.slug as string;
  t.match((await call('POST', '/guardrails', { name: 'nested', checks: [other] })).body.error, { code: 'invalid_type', param: 'checks[0]' });
  t.match((await call('PUT', `/guardrails/${other}`, { checks: [other] })).body.error, { code: 'invalid_type', param: 'checks[0]' }, 'not even itself');
  t.match((await call('PUT', `/guardrails/${other}`, { checks: [{ 'test.maxLen': { max: 'ten' } }] })).body.error, { code: 'invalid_type', param: 'checks[0]["test.maxLen"].max' });
  t.match((await call('POST', '/guardrails', { checks: [SHORT] })).body.error, { code: 'missing_required_parameter', param: 'name' });
  // Hostile depth is a 400, never a crash in a recursive copy (a regression of the first version).
  const deep = new Raw(`${'{"a":'.repeat(20_000)}{}${'}'.repeat(20_000)}`);
  const tooDeep = await call('POST', '/guardrails', { name: 'deep', checks: [SHORT, { 'test.maxLen': deep }] });
  t.match([tooDeep.status, tooDeep.body.error], [400, { code: 'invalid_value', param: 'checks[1]' }]);
  const deepConfig = await call('POST', '/configs', { name: 'deep', config: { provider: 'openai', input_guardrails: [withHeaders({ Authorization: HOOK_TOKEN })], x: deep } });
  t.match([deepConfig.status, deepConfig.body.error], [400, { code: 'invalid_value', param: 'config' }], 'a config nesting as deep: 400 too');
  t.match((await call('PUT', `/guardrails/${other}`, {})).body.error, { code: 'invalid_value' });
  t.equal(gw.store.c.guardrails.list().total, 1, 'only the valid one was stored');
  t.equal((await call('GET', `/guardrails/${other}/versions`)).body.total, 1, 'a refused update writes no version');
});

t.test('scopes and workspace isolation', async (t) => {
  const { gw, call } = await start(t);
  for (const s of ['create', 'read', 'update', 'delete', 'list'].map((a) => `guardrails.${a}`)) {
    t.ok(Scopes.DEFAULT_ORGANISATION_SCOPES.includes(s) && Scopes.DEFAULT_WORKSPACE_SCOPES.includes(s), `${s} is given by default to both kinds`);
    t.ok(Scopes.allowedScopes('organisation-service').has(s) && Scopes.allowedScopes('workspace-user').has(s), `${s} may be held by both kinds`);
  }
  const a = addWorkspace(gw.store, 'team-a', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const b = addWorkspace(gw.store, 'team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const readOnly = insertKey(gw.store, { workspace_id: a.id, scopes: ['guardrails.read', 'guardrails.list'] });

  const inA = await call('POST', '/guardrails', { name: 'a rule', checks: [SHORT] }, a.key);
  t.equal(inA.status, 200);
  t.equal(gw.store.c.guardrails.get(inA.body.id)!.workspace_id, a.id, "a workspace key creates in its own workspace");
  const inB = await call('POST', '/guardrails', { name: 'b rule', checks: [SHORT], workspace_id: 'team-b' });
  t.equal(gw.store.c.guardrails.get(inB.body.id)!.workspace_id, b.id, 'an organisation key names the workspace');

  const denied = await call('POST', '/guardrails', { name: 'x', checks: [SHORT] }, readOnly);
  t.equal(denied.status, 403);
  t.equal(denied.body.error.code, 'insufficient_scope');
  t.equal((await call('PUT', `/guardrails/${inA.body.slug}`, { name: 'y' }, readOnly)).status, 403);
  t.equal((await call('DELETE', `/guardrails/${inA.body.slug}`, undefined, readOnly)).status, 403);
  t.equal((await call('GET', `/guardrails/${inA.body.slug}`, undefined, readOnly)).status, 200, 'reading needs only guardrails.read');

  const listA = await call('GET', '/guardrails', undefined, a.key);
  t.same(listA.body.data.map((g: { slug: string }) => g.slug), [inA.body.slug], 'a workspace key lists its own workspace only');
  t.notMatch(listA.text, b.id);
  for (const [method, path, body] of [
    ['GET', `/guardrails/${inB.body.slug}`],
    ['GET', `/guardrails/${inB.body.id}`],
    ['GET', `/guardrails/${inB.body.slug}/versions`],
    ['PUT', `/guardrails/${inB.body.slug}`, { name: 'mine now' }],
    ['DELETE', `/guardrails/${inB.body.slug}`],
  ] as Array<[Method, string, unknown?]>) {
    t.equal((await call(method, path, body, a.key)).status, 404, `${method} ${path} from another workspace`);
  }
  t.equal((await call('GET', '/guardrails?workspace_id=team-b', undefined, a.key)).status, 403);
  t.equal((await call('POST', '/guardrails', { name: 'x', checks: [SHORT], workspace_id: 'team-b' }, a.key)).status, 403);
  t.equal(gw.store.c.guardrails.get(inB.body.id)!.name, 'b rule', 'untouched');
  t.equal((await call('GET', '/guardrails')).body.total, 2, 'an organisation key lists every workspace');
  t.equal((await call('GET', '/guardrails?workspace_id=team-b')).body.total, 1);
});

t.test('header values: sealed at rest, masked in every read and audit record, kept when sent back masked', async (t) => {
  const { gw, call } = await start(t);
  const created = await call('POST', '/guardrails', { name: 'hooked', checks: [SHORT, withHeaders({ Authorization: HOOK_TOKEN, 'X-Api-Key': HOOK_KEY })] });
  t.equal(created.status, 200);
  const { id, slug } = created.body as { id: string; slug: string };

  const stored = gw.store.c.guardrails.get(id)!;
  const storedHeaders = (stored.checks[1]!['test.webhook'] as { headers: Record<string, unknown> }).headers;
  t.match(storedHeaders, { Authorization: { sealed: /^v1:/ }, 'X-Api-Key': { sealed: /^v1:/ } }, 'stored sealed');
  const leaks = (text: string): boolean => text.includes(HOOK_TOKEN) || text.includes(HOOK_KEY) || text.includes('hook-SECRET') || text.includes('SECRET-KEY');
  t.notOk(leaks(JSON.stringify(stored)), 'no clear value in the stored record');
  t.notOk(leaks(JSON.stringify(gw.store.c.guardrailVersions.list().items)), 'nor in the stored versions');
  t.same(unsealGuardrailChecks(gw.store, stored.checks)[1], withHeaders({ Authorization: HOOK_TOKEN, 'X-Api-Key': HOOK_KEY }), 'unsealGuardrailChecks gives them back in clear');
  t.match(stored.checks[1], withHeaders({}), 'the rest of the guardrail is stored as sent');

  const got = await call('GET', `/guardrails/${slug}`);
  t.same(got.body.checks[1], withHeaders({ Authorization: maskSecret(HOOK_TOKEN), 'X-Api-Key': maskSecret(HOOK_KEY) }), 'masked in the detail');
  t.equal(got.body.checks[1]['test.webhook'].headers.Authorization, 'Bear*******def');

  // Sent back as read, with another change: the stored values stay.
  const read = got.body.checks as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  read[0]!['test.maxLen'].max = 50;
  t.equal((await call('PUT', `/guardrails/${slug}`, { checks: read })).status, 200);
  const kept = unsealGuardrailChecks(gw.store, gw.store.c.guardrails.get(id)!.checks);
  t.same(kept[1], withHeaders({ Authorization: HOOK_TOKEN, 'X-Api-Key': HOOK_KEY }), 'the masked values sent back keep the stored ones');
  t.equal((kept[0] as { 'test.maxLen': { max: number } })['test.maxLen'].max, 50);
  // A new value replaces; a header left out is gone.
  read[1]!['test.webhook'].headers = { Authorization: 'Bearer hook-SECRET-rotated-42' };
  t.equal((await call('PUT', `/guardrails/${slug}`, { checks: read })).status, 200);
  t.same(unsealGuardrailChecks(gw.store, gw.store.c.guardrails.get(id)!.checks)[1], withHeaders({ Authorization: 'Bearer hook-SECRET-rotated-42' }));
  // A masked value somewhere else (another guardrail) is not the stored secret: it is taken as sent.
  t.equal((await call('PUT', `/guardrails/${slug}`, { checks: [withHeaders({ Authorization: maskSecret('Bearer hook-SECRET-rotated-42') }), SHORT] })).status, 200);
  t.same(unsealGuardrailChecks(gw.store, gw.store.c.guardrails.get(id)!.checks)[0], withHeaders({ Authorization: 'Bear*******-42' }));

  // A refused write that got as far as the checks is audited without the values.
  const refused = await call('POST', '/guardrails', { name: 'bad', checks: [withHeaders({ Authorization: HOOK_TOKEN }), { 'test.maxLen': { max: -1 } }] });
  t.equal(refused.status, 400);
  t.notOk(leaks(refused.text), 'nor in the error');

  const versions = await call('GET', `/guardrails/${slug}/versions`);
  t.equal(versions.body.total, 4);
  t.equal(versions.body.data[3].checks[1]['test.webhook'].headers['X-Api-Key'], maskSecret(HOOK_KEY), 'old versions masked too');
  const list = await call('GET', '/guardrails');
  const audit = await auditRecords(gw);
  t.ok(audit.filter((r) => r.resource_type === 'guardrails').length >= 5, 'the writes are audited');
  for (const [what, text] of [['detail', got.text], ['versions', versions.text], ['list', list.text], ['audit', JSON.stringify(audit)], ['logs', JSON.stringify(gw.logs)]] as const) {
    t.notOk(leaks(text), `no header value in the ${what}`);
  }
  t.ok(JSON.stringify(audit).includes('[masked]'), 'the audit record shows where the values were');
});

t.test('saved configs: guardrail lists are checked, and their header values sealed', async (t) => {
  const { gw, call } = await start(t);
  addWorkspace(gw.store, 'team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const saved = (await call('POST', '/guardrails', { name: 'short', checks: [SHORT] })).body.slug as string;
  const elsewhere = (await call('POST', '/guardrails', { name: 'b only', checks: [SHORT], workspace_id: 'team-b' })).body.slug as string;

  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ provider: 'openai', input_guardrails: [{ 'test.maxLen': { max: -1 } }] }, 'value_below_minimum', 'config.input_guardrails[0]["test.maxLen"].max'],
    [{ provider: 'openai', output_guardrails: [saved, { 'nope.check': {} }] }, 'unknown_check', 'config.output_guardrails[1]["nope.check"]'],
    [{ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }, { provider: 'openai', default_input_guardrails: [{ 'test.maxLen': {} }] }] }, 'missing_required_parameter', 'config.targets[1].default_input_guardrails[0]["test.maxLen"].max'],
    [{ provider: 'openai', input_guardrails: ['gr-missing'] }, 'unknown_guardrail', 'config.input_guardrails[0]'],
    [{ provider: 'openai', default_output_guardrails: [elsewhere] }, 'unknown_guardrail', 'config.default_output_guardrails[0]'],
  ];
  for (const [config, code, param] of cases) {
    const res = await call('POST', '/configs', { name: 'g', config });
    t.equal(res.status, 400, param);
    t.match(res.body.error, { code, param }, `${code} at ${param}`);
  }
  t.equal(gw.store.c.configs.list().total, 0, 'none was stored');
  t.equal((await call('POST', '/configs', { name: 'g', config: { provider: 'openai', input_guardrails: [elsewhere] }, workspace_id: 'team-b' })).status, 200, "a saved guardrail of the config's own workspace");

  const nested = {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', input_guardrails: [saved, withHeaders({ Authorization: HOOK_TOKEN })] },
      { provider: 'openai', output_guardrails: [withHeaders({ 'X-Api-Key': HOOK_KEY })] },
    ],
  };
  const created = await call('POST', '/configs', { name: 'guarded', slug: 'pc-guarded', config: nested });
  t.equal(created.status, 200);
  const stored = gw.store.c.configs.get(created.body.id)!.config as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  t.match(stored.targets[0].input_guardrails[1]['test.webhook'].headers.Authorization, { sealed: /^v1:/ }, 'stored sealed');
  t.match(stored.targets[1].output_guardrails[0]['test.webhook'].headers['X-Api-Key'], { sealed: /^v1:/ }, 'at any node');
  t.equal(stored.targets[0].input_guardrails[0], saved, 'references stay as they are');
  const read = await call('GET', '/configs/pc-guarded');
  t.equal(read.body.config.targets[0].input_guardrails[1]['test.webhook'].headers.Authorization, maskSecret(HOOK_TOKEN), 'masked in reads');
  const resolved = resolveConfig(gw.store, 'pc-guarded', defaultWorkspaceId(gw)) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(resolved.targets[0].input_guardrails[1]['test.webhook'].headers.Authorization, HOOK_TOKEN, 'unsealed for the router');
  t.equal(resolved.targets[1].output_guardrails[0]['test.webhook'].headers['X-Api-Key'], HOOK_KEY);

  // Sent back as read: the stored values stay.
  read.body.config.targets[1].weight = 2;
  t.equal((await call('PUT', '/configs/pc-guarded', { config: read.body.config })).status, 200);
  const again = resolveConfig(gw.store, 'pc-guarded', defaultWorkspaceId(gw)) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(again.targets[0].input_guardrails[1]['test.webhook'].headers.Authorization, HOOK_TOKEN, 'the masked value sent back keeps the stored one');
  t.equal(again.targets[1].weight, 2);
  const badUpdate = await call('PUT', '/configs/pc-guarded', { config: { provider: 'openai', input_guardrails: [{ 'test.maxLen': { max: -1 } }] } });
  t.match(badUpdate.body.error, { code: 'value_below_minimum', param: 'config.input_guardrails[0]["test.maxLen"].max' });
  t.equal((await call('GET', '/configs/pc-guarded/versions')).body.total, 2);

  const versions = await call('GET', '/configs/pc-guarded/versions');
  const audit = JSON.stringify(await auditRecords(gw));
  for (const [what, text] of [['detail', read.text], ['versions', versions.text], ['audit', audit], ['stored', JSON.stringify(gw.store.c.configs.list().items)]] as const) {
    t.notOk(text.includes(HOOK_TOKEN) || text.includes(HOOK_KEY), `no header value in the ${what}`);
  }
});

t.test('API keys and workspaces name saved guardrails in their defaults', async (t) => {
  const { gw, call } = await start(t);
  const b = addWorkspace(gw.store, 'team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const inDefault = (await call('POST', '/guardrails', { name: 'short', checks: [SHORT] })).body as { id: string; slug: string };
  const inB = (await call('POST', '/guardrails', { name: 'b', checks: [SHORT], workspace_id: 'team-b' })).body as { id: string; slug: string };

  // Workspace keys: guardrails of their own workspace.
  const key = await call('POST', '/api-keys/workspace/service', {
    name: 'guarded',
    scopes: ['completions.write'],
    defaults: { input_guardrails: [inDefault.slug], output_guardrails: [inDefault.id] },
  });
  t.equal(key.status, 200);
  const read = await call('GET', `/api-keys/${key.body.id}`);
  t.match(read.body.defaults, { input_guardrails: [inDefault.slug], output_guardrails: [inDefault.id] }, 'shown back');
  t.match((gw.store.c.apiKeys.get(key.body.id)!.defaults as Record<string, unknown>) ?? {}, { input_guardrails: [inDefault.slug] }, 'stored in the defaults');
  const refused: Array<[Record<string, unknown>, string, string]> = [
    [{ input_guardrails: ['gr-missing'] }, 'unknown_guardrail', 'defaults.input_guardrails[0]'],
    [{ output_guardrails: [inDefault.slug, inB.slug] }, 'unknown_guardrail', 'defaults.output_guardrails[1]'],
    [{ input_guardrails: [{ 'test.maxLen': { max: 1 } }] }, 'invalid_type', 'defaults.input_guardrails[0]'],
    [{ input_guardrails: Array.from({ length: 33 }, () => inDefault.slug) }, 'too_many_items', 'defaults.input_guardrails'],
  ];
  for (const [defaults, code, param] of refused) {
    const res = await call('POST', '/api-keys/workspace/service', { name: 'x', scopes: ['completions.write'], defaults });
    t.match([res.status, res.body.error], [400, { code, param }], `create: ${code} at ${param}`);
  }
  const update = await call('PUT', `/api-keys/${key.body.id}`, { defaults: { input_guardrails: ['gr-missing'] } });
  t.match([update.status, update.body.error], [400, { code: 'unknown_guardrail', param: 'defaults.input_guardrails[0]' }]);
  t.match((await call('GET', `/api-keys/${key.body.id}`)).body.defaults, { input_guardrails: [inDefault.slug] }, 'a refused update changes nothing');
  t.equal((await call('PUT', `/api-keys/${key.body.id}`, { defaults: { output_guardrails: [inDefault.slug] } })).status, 200);
  t.same((await call('GET', `/api-keys/${key.body.id}`)).body.defaults.output_guardrails, [inDefault.slug]);
  // A workspace key's own workspace decides: B's key cannot name the default workspace's guardrail.
  const fromB = await call('POST', '/api-keys/workspace/service', { name: 'x', scopes: ['completions.write'], defaults: { input_guardrails: [inDefault.slug] } }, b.key);
  t.match(fromB.body.error, { code: 'unknown_guardrail', param: 'defaults.input_guardrails[0]' });
  t.equal((await call('POST', '/api-keys/workspace/service', { name: 'x', scopes: ['completions.write'], defaults: { input_guardrails: [inB.slug] } }, b.key)).status, 200);
  // An organisation key belongs to no workspace: any workspace's guardrail.
  const org = await call('POST', '/api-keys/organisation/service', { name: 'org', scopes: ['configs.read'], defaults: { input_guardrails: [inB.slug, inDefault.slug] } });
  t.equal(org.status, 200);
  t.match((await call('GET', `/api-keys/${org.body.id}`)).body.defaults, { input_guardrails: [inB.slug, inDefault.slug] });

  // Workspaces.
  const ws = await call('POST', '/admin/workspaces', { name: 'Research', defaults: { metadata: { team: 'r' }, input_guardrails: [inDefault.slug] } });
  t.equal(ws.status, 200);
  t.match(ws.body.defaults, { metadata: { team: 'r' }, input_guardrails: [inDefault.slug] }, 'shown back on create');
  t.match((await call('POST', '/admin/workspaces', { name: 'x', defaults: { output_guardrails: ['gr-missing'] } })).body.error, { code: 'unknown_guardrail', param: 'defaults.output_guardrails[0]' });
  t.equal((await call('PUT', `/admin/workspaces/${b.id}`, { defaults: { input_guardrails: [inB.slug], output_guardrails: [inB.id] } })).status, 200);
  const wsB = await call('GET', `/admin/workspaces/${b.id}`);
  t.match(wsB.body.defaults, { input_guardrails: [inB.slug], output_guardrails: [inB.id], metadata: {} }, 'shown back on read');
  const wrong = await call('PUT', `/admin/workspaces/${b.id}`, { defaults: { input_guardrails: [inDefault.slug] } });
  t.match([wrong.status, wrong.body.error], [400, { code: 'unknown_guardrail', param: 'defaults.input_guardrails[0]' }], "on update, only the workspace's own guardrails");
  t.equal((await call('PUT', `/admin/workspaces/${b.id}`, { defaults: { input_guardrails: [inB.slug] } }, b.key)).status, 200, 'a workspace key sets its own');
  t.equal((await call('PUT', `/admin/workspaces/${b.id}`, { defaults: { input_guardrails: [] } })).status, 200, 'an empty list clears');
  const cleared = (await call('GET', `/admin/workspaces/${b.id}`)).body.defaults;
  t.same([cleared.input_guardrails, cleared.output_guardrails], [[], [inB.id]], 'the other list is kept');
  t.match((await call('GET', '/admin/workspaces?name=Research')).body.data[0].defaults, { input_guardrails: [inDefault.slug] }, 'in lists too');
});

t.test('without the guardrails plugin, defaults naming guardrails are refused and configs are checked by schema only', async (t) => {
  const { call } = await start(t, 'pipeline: [auth, admin-org, admin-api-keys, admin-resources]\n');
  const res = await call('POST', '/api-keys/workspace/service', { name: 'x', scopes: ['completions.write'], defaults: { input_guardrails: ['gr-any'] } });
  t.match([res.status, res.body.error], [400, { code: 'invalid_value', param: 'defaults.input_guardrails' }]);
  t.equal((await call('POST', '/api-keys/workspace/service', { name: 'x', scopes: ['completions.write'], defaults: { input_guardrails: [] } })).status, 200, 'an empty list is fine');
  t.equal((await call('POST', '/configs', { name: 'c', config: { provider: 'openai', input_guardrails: [{ 'test.maxLen': { max: -1 } }] } })).status, 200);
});

t.test('audit records and the OpenAPI document', async (t) => {
  const { gw, call } = await start(t);
  const readOnly = insertKey(gw.store, { workspace_id: null, scopes: ['guardrails.read'] });
  const slug = (await call('POST', '/guardrails', { name: 'audited', checks: [SHORT] })).body.slug as string;
  await call('PUT', `/guardrails/${slug}`, { name: 'audited 2' });
  await call('DELETE', `/guardrails/${slug}`);
  await call('POST', '/guardrails', { name: 'refused', checks: [SHORT] }, readOnly);
  await call('GET', `/guardrails/${slug}`);
  const records = (await auditRecords(gw)).filter((r) => r.resource_type === 'guardrails');
  t.same(
    records.map((r) => [r.method, r.action, r.response_status_code]).sort(),
    [['DELETE', 'delete', 200], ['POST', 'create', 200], ['POST', 'create', 403], ['PUT', 'update', 200]],
    'each write once, the refused one too; reads are not audited',
  );

  const doc = await request(`${gw.url}/v1/openapi.json`).then((r) => r.body.json()) as { paths: Record<string, Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  const { paths } = doc;
  t.same(Object.keys(paths['/v1/guardrails'] ?? {}).sort(), ['get', 'post']);
  t.same(Object.keys(paths['/v1/guardrails/{slug}'] ?? {}).sort(), ['delete', 'get', 'put']);
  t.same(Object.keys(paths['/v1/guardrails/{slug}/versions'] ?? {}), ['get']);
  const post = paths['/v1/guardrails']!.post;
  t.match(post, { 'x-required-scope': 'guardrails.create', tags: ['guardrails'] });
  t.match(post.requestBody.content['application/json'].schema, { required: ['name', 'checks'], properties: { checks: { type: 'array', minItems: 1, maxItems: 32, items: { type: 'object' } } } });
  t.match(paths['/v1/guardrails/{slug}']!.get.responses['200'].content['application/json'].schema, { properties: { checks: { type: 'array' }, slug: { type: 'string' } } });
  t.match(paths['/v1/guardrails']!.get.parameters, [{ name: 'workspace_id' }, { name: 'status', schema: { enum: ['active', 'archived'] } }, { name: 'current_page' }, { name: 'page_size' }]);
  const wsDefaults = paths['/v1/admin/workspaces/{id}']!.put.requestBody.content['application/json'].schema.properties.defaults.properties;
  t.match(wsDefaults, { input_guardrails: { type: 'array', maxItems: 32 }, output_guardrails: { type: 'array' } }, 'workspace defaults documented');
});
