/**
 * The CRUD route builders (core/admin/crud.ts) as plain functions: what each fills in (method,
 * path, audit action, scope, level), what a route may still override, and the six routes of a
 * versioned resource in their order. Their behaviour over HTTP is the admin tests' (configs,
 * guardrails, prompts, partials, policies, providers, virtual keys, …), which run through them.
 */
import t from 'tap';
import { crudRoutes, versionedRoutes, S, type AnyAdminRoute, type Records } from '../core/index.js';

const shape = (r: AnyAdminRoute): string => `${r.method} ${r.path} ${r.resource}.${r.action} ${r.scope ?? '-'} ${r.level}`;
const handler = (): Record<string, never> => ({});

t.test('crudRoutes fills in method, path, action, scope and level', async (t) => {
  const crud = crudRoutes({ path: '/v1/things', key: 'slug', resource: 'thing', scopes: 'things', level: 'workspace' });
  const routes = [
    crud.create({ summary: 'c', response: S.empty, handler }),
    crud.list({ summary: 'l', response: S.empty, handler }),
    crud.read({ summary: 'r', response: S.empty, handler }),
    crud.update({ summary: 'u', response: S.empty, handler }),
    crud.delete({ summary: 'd', response: S.empty, handler }),
    crud.member({ method: 'PUT', path: '/rotate', action: 'rotate', summary: 'm', response: S.empty, handler }),
  ];
  t.same(routes.map(shape), [
    'POST /v1/things thing.create things.create workspace',
    'GET /v1/things thing.list things.list workspace',
    'GET /v1/things/:slug thing.read things.read workspace',
    'PUT /v1/things/:slug thing.update things.update workspace',
    'DELETE /v1/things/:slug thing.delete things.delete workspace',
    'PUT /v1/things/:slug/rotate thing.rotate things.rotate workspace',
  ]);
  t.same(routes.map((r) => r.summary), ['c', 'l', 'r', 'u', 'd', 'm'], 'the route keeps what it says');
});

t.test('a route overrides scope and level; null scopes leave authorization to the handler', async (t) => {
  const crud = crudRoutes({ path: '/v1/things', key: 'id', resource: 'thing', scopes: null, level: 'workspace' });
  t.equal(shape(crud.read({ summary: 'r', response: S.empty, handler })), 'GET /v1/things/:id thing.read - workspace');
  const owned = crudRoutes({ path: '/v1/things', key: 'id', resource: 'thing', scopes: 'things', level: 'workspace' });
  const route = owned.member({ method: 'GET', path: '/versions', action: 'list', scope: 'things.read', level: 'organisation', summary: 'v', response: S.empty, handler });
  t.equal(shape(route), 'GET /v1/things/:id/versions thing.list things.read organisation');
});

t.test('versionedRoutes: create, list, read, update, delete, versions, in that order', async (t) => {
  const crud = crudRoutes({ path: '/v1/guardrails', key: 'slug', resource: 'guardrails', scopes: 'guardrails', level: 'workspace' });
  const create = crud.create({ summary: 'own create', response: S.empty, handler });
  const update = crud.update({ summary: 'own update', response: S.empty, handler });
  const routes = versionedRoutes<Records.GuardrailRecord, Records.GuardrailVersion>(crud, {
    noun: 'Guardrail',
    records: (store) => store.c.guardrails,
    find: (store, slug) => store.c.guardrails.getBy('slug', slug),
    create,
    update,
    list: { summary: 'list', item: S.anyObject, view: (g) => g },
    read: { summary: 'read', response: S.anyObject, view: (_store, g) => g },
    delete: { summary: 'delete' },
    versions: { summary: 'versions', records: (store) => store.c.guardrailVersions, index: 'guardrail', item: S.anyObject, view: (_store, _g, v) => v },
  });
  t.same(routes.map(shape), [
    'POST /v1/guardrails guardrails.create guardrails.create workspace',
    'GET /v1/guardrails guardrails.list guardrails.list workspace',
    'GET /v1/guardrails/:slug guardrails.read guardrails.read workspace',
    'PUT /v1/guardrails/:slug guardrails.update guardrails.update workspace',
    'DELETE /v1/guardrails/:slug guardrails.delete guardrails.delete workspace',
    'GET /v1/guardrails/:slug/versions guardrails.list guardrails.read workspace',
  ]);
  t.equal(routes[0], create, 'the resource\'s own create, as given');
  t.equal(routes[3], update, 'the resource\'s own update, as given');
  t.equal(routes[1]!.workspaceDefault, 'all', 'the list spans workspaces for an organisation key');
  t.same(Object.keys((routes[1]!.query as { properties: object }).properties), ['workspace_id', 'status', 'current_page', 'page_size']);
  t.same(Object.keys((routes[5]!.query as { properties: object }).properties), ['current_page', 'page_size']);
});
