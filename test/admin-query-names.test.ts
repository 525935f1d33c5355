/**
 * Unknown query names on admin reads: a typo in a filter (`GET /v1/virtual-keys?staus=active`) is
 * a 400 `unknown_parameter` naming it and listing the accepted names, never a list that silently
 * ignored it. Table-driven over every admin GET route the OpenAPI document lists, so a route
 * added later is covered without touching this file. Routes that take free-form names
 * (analytics: filters rollups cannot apply have their own error) keep answering as before.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY } from './helpers/gateway.js';

interface Answer {
  status: number;
  body: { error?: { code: string; param: string | null; message: string }; [k: string]: unknown };
}

interface Operation {
  parameters: Array<{ name: string; in: string }>;
  responses: { '200': { content: { 'application/json': { schema: { properties?: Record<string, unknown> } } } } };
}

const PIPELINE = [
  'logging',
  'analytics',
  'auth',
  'guardrails',
  'usage-limits',
  'admin-org',
  'admin-api-keys',
  'admin-resources',
  'admin-policies',
  'admin-catalog',
  'mcp-gateway',
  'prompts',
];

/**
 * Not checked here: analytics is free-form by design (its schema is open; tested below), and the
 * export download is a raw streaming route, not one `adminRoutes` compiles (it takes no query).
 */
const OPEN = /^\/v1\/analytics\/|^\/v1\/logs\/exports\/\{id\}\/download$/;

t.test('unknown query names on admin GET routes', async (t) => {
  const gw = await startGateway(t, { yaml: `pipeline: [${PIPELINE.join(', ')}]\n`, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const get = async (path: string): Promise<Answer> => {
    const res = await request(`${gw.url}${path}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    return { status: res.statusCode, body: (await res.body.json()) as Answer['body'] };
  };

  const doc = await get('/v1/openapi.json');
  const paths = doc.body.paths as Record<string, { get?: Operation }>;
  const reads = Object.entries(paths).filter(([path, ops]) => ops.get !== undefined && !OPEN.test(path));
  const isList = (op: Operation): boolean => op.responses['200'].content['application/json'].schema.properties?.data !== undefined;
  const lists = reads.filter(([, ops]) => isList(ops.get!));
  // A floor, so a document that lost its routes does not pass by testing nothing.
  t.ok(lists.length >= 25, `${lists.length} list routes in the document`);

  for (const [template, ops] of reads) {
    // Any id will do: the query is checked before the handler looks anything up.
    const path = template.replace(/\{[^}]+\}/g, 'x1');
    const accepted = ops.get!.parameters.filter((p) => p.in === 'query').map((p) => p.name);
    const answer = await get(`${path}${path.includes('?') ? '&' : '?'}staus=active`);
    t.equal(answer.status, 400, `GET ${template}?staus=active is a 400`);
    t.equal(answer.body.error?.code, 'unknown_parameter', `GET ${template}: code`);
    t.equal(answer.body.error?.param, 'staus', `GET ${template}: names the parameter`);
    for (const name of accepted) t.match(answer.body.error?.message, name, `GET ${template}: lists ${name}`);
  }
});

t.test('known names, workspace_id and writes with a query are served as before', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [analytics, auth, admin-resources, admin-policies]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> => {
    const res = await request(`${gw.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Answer['body'] };
  };

  const created = await call('POST', '/v1/configs?note=anything', { name: 'kept', config: { provider: 'openai' } });
  t.equal(created.status, 200, 'a write ignores its query, as before (it is recorded in the audit record)');

  const listed = await call('GET', '/v1/configs?status=active&current_page=0&page_size=10&workspace_id=default');
  t.equal(listed.status, 200, 'declared names are served');
  t.equal(listed.body.total, 1);

  const typo = await call('GET', '/v1/virtual-keys?staus=active');
  t.equal(typo.status, 400);
  t.same(typo.body.error, {
    message: '"staus" is not a known query parameter. Accepted: workspace_id, current_page, page_size.',
    type: 'invalid_request_error',
    param: 'staus',
    code: 'unknown_parameter',
  });

  // A read of one record takes only `workspace_id`: anything else is refused the same way.
  const one = await call('GET', `/v1/configs/${String(created.body.slug)}?verbose=1`);
  t.equal(one.body.error?.code, 'unknown_parameter');
  t.match(one.body.error?.message, 'Accepted: workspace_id.');
  t.equal((await call('GET', `/v1/configs/${String(created.body.slug)}?workspace_id=default`)).status, 200);

  // A hostile name is echoed bounded.
  const long = await call('GET', `/v1/configs?${'k'.repeat(5000)}=1`);
  t.equal(long.body.error?.code, 'unknown_parameter');
  t.ok(long.body.error!.message.length < 300, 'message bounded');
  t.equal(long.body.error?.param?.length, 255, 'param bounded');

  // Analytics keeps its own answers: a filter rollups cannot apply, and unknown names ignored.
  const range = 'time_of_generation_min=2026-01-01T00:00:00Z&time_of_generation_max=2026-01-02T00:00:00Z';
  const unsupported = await call('GET', `/v1/analytics/graphs/requests?${range}&cost_min=1`);
  t.equal(unsupported.body.error?.code, 'unsupported_filter', 'analytics: its own error for a filter it cannot apply');
  t.equal((await call('GET', `/v1/analytics/graphs/requests?${range}&anything=1`)).status, 200, 'analytics: open names still served');
});
