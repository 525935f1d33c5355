/**
 * Schemas from plugins are checked against JSON Schema's meta-schema at boot by one shared checker
 * (core/validation/schema-check.ts), while the validators themselves compile later: an admin
 * route's on its first call, a guardrail check's when a guardrail first names it. A broken schema
 * still stops the gateway at boot, naming where it is; a good one still validates requests.
 */
import t from 'tap';
import { request } from 'undici';
import { schemaProblem } from '../core/validation/schema-check.js';
import { adminRoutes, defineAdminRoute } from '../core/admin/route.js';
import { loadConfigText } from '../core/config/load.js';
import { resolvePlugins, type PluginCatalog } from '../core/plugin-loader.js';
import { definePlugin, type GatewayApp, type PluginDefinition } from '../core/plugin.js';
import { defineCheck } from '../core/index.js';
import { CheckRegistry } from '../plugins/guardrails/registry.js';
import { ADMIN_KEY, startGateway } from './helpers/gateway.js';

t.test('schemaProblem: null for a valid schema, the reason for an invalid one', async (t) => {
  t.equal(schemaProblem({ type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] }), null);
  t.equal(schemaProblem(true), null, 'a boolean schema is valid');
  t.match(schemaProblem({ type: 'object', properties: { n: { type: 'integr' } } }), /data\/properties\/n\/type/);
  t.match(schemaProblem({ required: 'name' }), /data\/required must be array/);
  t.equal(schemaProblem('string'), 'a schema is an object or a boolean');
  t.equal(schemaProblem(null), 'a schema is an object or a boolean');
});

const app = { store: {} } as GatewayApp;
const route = (extra: Record<string, unknown>) =>
  defineAdminRoute({
    method: 'POST',
    path: '/v1/widgets',
    summary: 'Create a widget',
    resource: 'widgets',
    action: 'create',
    scope: null,
    level: 'organisation',
    response: { type: 'object', properties: { id: { type: 'string' } } },
    handler: () => ({ id: 'w1' }),
    ...extra,
  } as never);

t.test('an admin route with an invalid body or query schema is refused when it is defined', async (t) => {
  t.throws(() => adminRoutes(app, [route({ body: { type: 'object', properties: { name: { type: 'strng' } } } })]), {
    message: /admin route POST \/v1\/widgets: its body schema is not valid JSON Schema: data\/properties\/name\/type/,
  });
  t.throws(() => adminRoutes(app, [route({ method: 'GET', query: { properties: { limit: { minimum: 'one' } } } })]), {
    message: /admin route GET \/v1\/widgets: its query schema is not valid JSON Schema: .*minimum must be number/,
  });
  t.equal(adminRoutes(app, [route({ body: { type: 'object', properties: { name: { type: 'string' } } } })]).length, 1, 'a valid one is made');
});

t.test('a plugin whose option schema is invalid is a config problem at boot', async (t) => {
  const { config, locate } = loadConfigText('pipeline:\n  - widgets: {size: 3}\n', '<inline>', {});
  t.ok(config);
  const broken: PluginDefinition<never> = definePlugin({ name: 'widgets', configSchema: { type: 'object', properties: { size: { type: 'integer', maximum: 'ten' } } }, setup: () => ({}) } as never);
  const catalog: PluginCatalog = { widgets: async () => ({ default: broken }) };
  await t.rejects(resolvePlugins(config!, locate, catalog), { message: /plugin "widgets" has an invalid configSchema: schema is invalid: .*maximum must be number/ });

  const good: PluginDefinition<never> = definePlugin({ name: 'widgets', configSchema: { type: 'object', properties: { size: { type: 'integer', maximum: 2 } } }, setup: () => ({}) } as never);
  await t.rejects(resolvePlugins(config!, locate, { widgets: async () => ({ default: good }) }), { message: /must be <= 2/ }, 'a valid one still validates the options');
});

t.test('a guardrail check with an invalid parameter schema is refused when registered', async (t) => {
  const registry = new CheckRegistry({} as never);
  const check = (parameters: Record<string, unknown>) => defineCheck({ id: 'acme.widgets', description: 'widgets', parameters, run: () => ({ verdict: true }) } as never);
  t.throws(() => registry.register(check({ type: 'object', properties: { n: { type: 'numbr' } } })), {
    message: /check "acme\.widgets": its parameters schema is not valid JSON Schema: data\/properties\/n\/type/,
  });
  registry.register(check({ type: 'object', properties: { n: { type: 'number', maximum: 5 } }, additionalProperties: false }));
  t.ok(registry.ids().includes('acme.widgets'), 'a valid one is registered');
});

t.test('admin routes validate and serialize on their first call and on later ones alike', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, admin-org]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const post = async (body: unknown) => {
    const res = await request(`${gw.url}/v1/admin/workspaces`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as { error?: { code: string; param: string | null }; slug?: string } };
  };
  // The first call compiles the route: a bad body is refused as before, naming the field.
  const bad = await post({ name: 42 });
  t.equal(bad.status, 400);
  t.equal(bad.body.error?.param, 'name');
  const ok = await post({ name: 'Widgets team', slug: 'widgets' });
  t.equal(ok.status, 200);
  t.equal(ok.body.slug, 'widgets');
  const again = await post({ name: 7 });
  t.equal(again.status, 400, 'the compiled validator is kept');
  t.equal(again.body.error?.param, 'name');
});
