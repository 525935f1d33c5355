/**
 * `GET /v1/principal` (the auth plugin): who the caller is, for the bootstrap organisation key, a
 * workspace service key with few scopes, a key with no scope at all, a workspace user key and
 * JWTs (a local JWKS); 401 without a credential; never the key, its hash or its masked form; and
 * its entry in the OpenAPI document.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startGateway, ADMIN_KEY, addWorkspace, insertKey } from './helpers/gateway.js';
import { Scopes } from '../core/index.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('GET /v1/principal', async (t) => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const jwks = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => jwks.close(() => r())));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;

  const gw = await startGateway(t, {
    yaml: `pipeline:\n  - auth:\n      jwt: {jwks_url: "${jwksUrl}", issuer: "https://idp.test/", audience: gateway, scopes_claim: perms}\n  - admin-api-keys\n`,
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const store = gw.store;
  const orgId = store.meta.get('organisation_id') as string;
  const teamA = addWorkspace(store, 'team-a', ['logs.list', 'analytics.view', 'configs.read']);
  const bare = insertKey(store, { workspace_id: teamA.id, scopes: [], name: 'no scopes' });
  const userKey = insertKey(store, { type: 'workspace-user', workspace_id: teamA.id, user_id: 'user-7', scopes: ['completions.write'], name: 'alice laptop' });
  const keyOf = (name: string): Json => store.c.apiKeys.list({ filter: (k) => k.name === name }).items[0]!;

  const get = async (credential?: string): Promise<{ status: number; body: Json; text: string }> => {
    const res = await request(`${gw.url}/v1/principal`, { headers: credential === undefined ? {} : { 'x-gateway-api-key': credential } });
    const text = await res.body.text();
    return { status: res.statusCode, body: JSON.parse(text) as Json, text };
  };

  t.test('the bootstrap organisation key', async (t) => {
    const admin = store.c.apiKeys.list({ filter: (k) => k.workspace_id === null }).items[0]!;
    const res = await get(ADMIN_KEY);
    t.equal(res.status, 200);
    t.same(res.body, {
      object: 'principal',
      kind: 'api_key',
      id: admin.id,
      name: admin.name,
      type: 'organisation',
      sub_type: 'service',
      organisation_id: orgId,
      workspace_id: null,
      workspace_slug: null,
      user_id: null,
      organisation_role: 'owner',
      workspace_role: null,
      scopes: [...new Set(Scopes.DEFAULT_ORGANISATION_SCOPES)].sort(),
    });
    t.notMatch(res.text, ADMIN_KEY, 'never the key');
    t.notMatch(res.text, admin.hash, 'nor its hash');
    t.notMatch(res.text, admin.masked_key, 'nor its masked form');
  });

  t.test('a workspace service key with three scopes', async (t) => {
    const res = await get(teamA.key);
    t.equal(res.status, 200);
    t.same(res.body, {
      object: 'principal',
      kind: 'api_key',
      id: keyOf('team-a key').id,
      name: 'team-a key',
      type: 'workspace',
      sub_type: 'service',
      organisation_id: orgId,
      workspace_id: teamA.id,
      workspace_slug: 'team-a',
      user_id: null,
      organisation_role: 'admin',
      workspace_role: null,
      scopes: ['analytics.view', 'configs.read', 'logs.list'],
    });
    t.notMatch(res.text, teamA.key);
    t.notOk('defaults' in res.body || 'key' in res.body || 'masked_key' in res.body, 'no defaults, no key fields');
  });

  t.test('no scope is needed', async (t) => {
    const res = await get(bare);
    t.equal(res.status, 200);
    t.same([res.body.name, res.body.scopes], ['no scopes', []]);
  });

  t.test('a workspace user key: its user and roles', async (t) => {
    const res = await get(userKey);
    t.equal(res.status, 200);
    t.match(res.body, { kind: 'api_key', type: 'workspace', sub_type: 'user', user_id: 'user-7', organisation_role: 'member', workspace_role: 'member', workspace_slug: 'team-a', scopes: ['completions.write'] });
  });

  t.test('JWTs: nothing stored, claims as the plugin maps them', async (t) => {
    const sign = (claims: Record<string, unknown>): Promise<string> =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://idp.test/').setAudience('gateway').setSubject('user-42').setIssuedAt().setExpirationTime('5m').sign(privateKey);
    const inWorkspace = await get(await sign({ perms: 'logs.list configs.read', workspace: 'team-a', role: 'manager' }));
    t.equal(inWorkspace.status, 200);
    t.same(inWorkspace.body, {
      object: 'principal',
      kind: 'jwt',
      id: null,
      name: null,
      type: 'workspace',
      sub_type: null,
      organisation_id: orgId,
      workspace_id: teamA.id,
      workspace_slug: 'team-a',
      user_id: 'user-42',
      organisation_role: 'member',
      workspace_role: 'manager',
      scopes: ['configs.read', 'logs.list'],
    });
    const orgLevel = await get(await sign({ perms: [], role: 'admin' }));
    t.equal(orgLevel.status, 200);
    t.match(orgLevel.body, { kind: 'jwt', type: 'organisation', workspace_id: null, workspace_slug: null, organisation_role: 'admin', workspace_role: null, scopes: [] });
  });

  t.test('no credential, or a bad one: 401', async (t) => {
    const none = await get();
    t.equal(none.status, 401);
    t.equal(none.body.error.code, 'missing_api_key');
    const bad = await get('gw-not-a-key');
    t.equal(bad.status, 401);
    t.equal(bad.body.error.code, 'invalid_api_key');
  });

  t.test('documented in the OpenAPI document, with no scope', async (t) => {
    const doc = (await request(`${gw.url}/v1/openapi.json`).then((r) => r.body.json())) as Json;
    const op = doc.paths['/v1/principal']?.get;
    t.ok(op, 'GET /v1/principal is documented');
    t.equal(op['x-required-scope'], null);
    t.same(op.security, [{ apiKey: [] }], 'not public');
    const schema = op.responses['200'].content['application/json'].schema;
    t.same(schema.properties.workspace_id.type, ['string', 'null']);
    t.notOk('key' in schema.properties, 'the response cannot carry a key');
  });
});
