/**
 * `POST /v1/configs/validate`: a save's checks without the save. Every problem a save would
 * refuse, with the same first problem (path, message, code) as the save's 400; several unrelated
 * problems listed together; saved guardrails looked up in the named workspace; nothing stored and
 * nothing audited; scope `configs.create`; not shadowed by a config whose slug is `validate`; in
 * the OpenAPI document.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, addWorkspace, insertKey, type StartedGateway } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const PROVIDER_SECRET = 'sk-validate-SECRET-0123456789abcdef';

t.test('POST /v1/configs/validate', async (t) => {
  const gw: StartedGateway = await startGateway(t, {
    yaml: 'pipeline: [auth, guardrails, admin-resources]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const store = gw.store;
  const teamB = addWorkspace(store, 'team-b', ['configs.create', 'configs.read']);
  const reader = insertKey(store, { workspace_id: teamB.id, scopes: ['configs.read', 'configs.list'] });

  /** `key: ''`: no key at all. */
  const call = async (method: Method, path: string, body?: unknown, key = ADMIN_KEY): Promise<{ status: number; body: Json; text: string }> => {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    if (key !== '') headers['x-gateway-api-key'] = key;
    const res = await request(`${gw.url}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    return { status: res.statusCode, body: JSON.parse(text) as Json, text };
  };
  const validate = (body: unknown, key?: string): ReturnType<typeof call> => call('POST', '/configs/validate', body, key);
  /** What is stored: configs, their versions, audit records. */
  const counts = async (): Promise<number[]> => {
    await store.flush();
    return [store.c.configs.list().total, store.c.configVersions.list().total, store.c.audit.list().total];
  };

  // A saved guardrail of team-b only.
  const saved = await call('POST', '/guardrails', { name: 'b only', checks: [{ 'default.wordCount': { max: 100 }, deny: true }], workspace_id: 'team-b' });
  t.equal(saved.status, 200, 'a saved guardrail in team-b');
  const bOnly = saved.body.slug as string;
  const before = await counts();

  t.test('a valid config: {valid: true}', async (t) => {
    const config = { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: PROVIDER_SECRET }, { provider: 'openai', custom_host: 'http://127.0.0.1:11434/v1' }] };
    const res = await validate({ config });
    t.equal(res.status, 200);
    t.same(res.body, { valid: true });
    t.same(await validate({ config: { provider: 'openai', input_guardrails: [bOnly] }, workspace_id: 'team-b' }).then((r) => r.body), { valid: true }, "a saved guardrail of the named workspace");
  });

  // [config, the problems expected]: each first one is also what a save answers.
  const cases: Array<[string, Json, Array<{ path: string; code: string }>]> = [
    ['schema: a negative weight', { strategy: { mode: 'loadbalance' }, targets: [{ provider: 'openai', weight: -1 }] }, [{ path: 'config.targets[0].weight', code: 'value_below_minimum' }]],
    ['schema: an unknown strategy mode', { strategy: { mode: 'roundrobin' }, targets: [{ provider: 'openai' }] }, [{ path: 'config.strategy.mode', code: 'invalid_value' }]],
    ['rules: conditional routing without conditions', { strategy: { mode: 'conditional' }, targets: [{ name: 'a', provider: 'openai' }] }, [{ path: 'config.strategy.conditions', code: 'missing_required_parameter' }]],
    ['rules: a leaf with nothing to call', { retry: { attempts: 1 } }, [{ path: 'config.provider', code: 'missing_required_parameter' }]],
    ['the upstream guard: a cloud metadata address', { provider: 'openai', custom_host: 'http://169.254.169.254/v1' }, [{ path: 'config.custom_host', code: '' }]],
    ['guardrails: a saved one of another workspace', { provider: 'openai', input_guardrails: [bOnly] }, [{ path: 'config.input_guardrails[0]', code: 'unknown_guardrail' }]],
    ['guardrails: bad check parameters', { provider: 'openai', output_guardrails: [{ 'default.wordCount': { max: -1 } }] }, [{ path: 'config.output_guardrails[0]["default.wordCount"].max', code: 'value_below_minimum' }]],
    [
      'two unrelated problems: a refused host and an unknown guardrail',
      { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', custom_host: 'http://169.254.169.254/v1' }, { provider: 'openai', input_guardrails: ['gr-missing'] }] },
      [{ path: 'config.targets[0].custom_host', code: '' }, { path: 'config.targets[1].input_guardrails[0]', code: 'unknown_guardrail' }],
    ],
  ];
  for (const [name, config, expected] of cases) {
    t.test(name, async (t) => {
      const res = await validate({ config });
      t.equal(res.status, 200);
      t.equal(res.body.valid, false);
      const errors = res.body.errors as Array<{ path: string; message: string; code: string }>;
      t.same(errors.map((e) => e.path), expected.map((e) => e.path), 'every problem, by path');
      for (const [i, e] of expected.entries()) {
        if (e.code !== '') t.equal(errors[i]!.code, e.code);
        t.ok(errors[i]!.message.length > 0 && errors[i]!.code.length > 0, 'a message and a code');
        t.same(Object.keys(errors[i]!).sort(), ['code', 'message', 'path']);
      }
      const save = await call('POST', '/configs', { name: 'never saved', config });
      t.equal(save.status, 400, 'a save refuses it');
      t.same({ path: save.body.error.param, message: save.body.error.message, code: save.body.error.code }, errors[0], "the save's 400 is the first problem, word for word");
    });
  }

  t.test('a body that is not a config request: 400, as for a save', async (t) => {
    t.equal((await validate({})).body.error?.code, 'missing_required_parameter');
    t.equal((await validate({ config: [] })).body.error?.param, 'config');
    t.equal((await validate({ config: {}, name: 'x' })).body.error?.code, 'unknown_parameter');
    const nowhere = await validate({ config: { provider: 'openai' }, workspace_id: 'nope' });
    t.equal(nowhere.status, 404, 'an unknown workspace');
  });

  t.test('nothing is stored, nothing audited, no secret echoed', async (t) => {
    const res = await validate({ config: { provider: 'openai', api_key: PROVIDER_SECRET, weight: 'heavy' } });
    t.equal(res.body.valid, false);
    t.notMatch(res.text, PROVIDER_SECRET);
    await validate({ config: { provider: 'openai' } }, reader); // refused (403): not audited either
    // The saves the cases above tried were refused and audited: count them out.
    const refusedSaves = cases.length;
    const after = await counts();
    t.same(after.slice(0, 2), before.slice(0, 2), 'no config, no version');
    t.equal(after[2], before[2]! + refusedSaves, 'audit records: only the refused saves');
    const validations = store.c.audit.list().items.filter((r) => r.uri.startsWith('/v1/configs/validate'));
    t.same(validations, [], 'no audit record for a validation');
  });

  t.test('scope configs.create; a workspace key within its workspace', async (t) => {
    t.equal((await validate({ config: { provider: 'openai' } }, '')).status, 401, 'no key');
    const denied = await validate({ config: { provider: 'openai' } }, reader);
    t.equal(denied.status, 403);
    t.equal(denied.body.error.code, 'insufficient_scope');
    t.same((await validate({ config: { provider: 'openai', input_guardrails: [bOnly] } }, teamB.key)).body, { valid: true }, "a team-b key: team-b's guardrails");
    t.equal((await validate({ config: { provider: 'openai' }, workspace_id: 'default' }, teamB.key)).status, 403, 'not another workspace');
  });

  t.test('a config whose slug is "validate" cannot shadow the route', async (t) => {
    const created = await call('POST', '/configs', { name: 'shadow', slug: 'validate', config: { provider: 'openai' } });
    t.equal(created.status, 200);
    t.same((await validate({ config: { provider: 'openai' } })).body, { valid: true }, 'POST still validates');
    t.same((await validate({ config: { retry: {} } })).body.valid, false);
    const read = await call('GET', '/configs/validate');
    t.equal(read.status, 200, 'GET reads the config');
    t.equal(read.body.slug, 'validate');
    t.equal((await call('PUT', '/configs/validate', { name: 'renamed' })).status, 200, 'PUT updates it');
    t.equal((await call('GET', '/configs/validate')).body.name, 'renamed');
  });

  t.test('in the OpenAPI document', async (t) => {
    const doc = (await request(`${gw.url}/v1/openapi.json`).then((r) => r.body.json())) as Json;
    const op = doc.paths['/v1/configs/validate']?.post;
    t.ok(op, 'POST /v1/configs/validate is documented');
    t.equal(op['x-required-scope'], 'configs.create');
    t.same(op.requestBody.content['application/json'].schema.required, ['config']);
    const schema = op.responses['200'].content['application/json'].schema;
    t.same(schema.required, ['valid']);
    t.same(schema.properties.errors.items.required, ['path', 'message', 'code']);
  });
});
