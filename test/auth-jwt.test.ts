/**
 * JWTs as credentials, validated against a JWKS served locally: signature, issuer, audience and
 * expiry are checked; scopes, user and workspace come from the claims named in the YAML.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startGateway, startMock, direct, ADMIN_KEY } from './helpers/gateway.js';

t.test('JWT auth against a local JWKS', async (t) => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const stranger = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const jwks = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => jwks.close(() => r())));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;

  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `pipeline:\n  - auth:\n      jwt: {jwks_url: "${jwksUrl}", issuer: "https://idp.test/", audience: gateway, scopes_claim: perms}\n  - admin-resources\n`,
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });

  const sign = (claims: Record<string, unknown>, opts: { exp?: string; aud?: string; iss?: string; key?: Parameters<SignJWT['sign']>[0] } = {}): Promise<string> =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(opts.iss ?? 'https://idp.test/')
      .setAudience(opts.aud ?? 'gateway')
      .setSubject('user-42')
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? '5m')
      .sign(opts.key ?? privateKey);

  const get = async (token: string, path = '/v1/configs'): Promise<{ status: number; code?: string }> => {
    const res = await request(`${gw.url}${path}`, { headers: { 'x-gateway-api-key': token } });
    const body = (await res.body.json()) as { error?: { code: string } };
    return { status: res.statusCode, code: body.error?.code };
  };

  const good = await sign({ perms: 'configs.list configs.read completions.write', workspace: 'default' });
  t.same(await get(good), { status: 200, code: undefined }, 'a valid token with the scope');
  t.same(await get(await sign({ perms: ['configs.read'], workspace: 'default' })), { status: 403, code: 'insufficient_scope' }, 'scopes as an array; lacking one');
  t.same(await get(await sign({ perms: 'configs.list' }, { exp: '-1m' })), { status: 401, code: 'invalid_token' }, 'expired');
  t.same(await get(await sign({ perms: 'configs.list' }, { aud: 'someone-else' })), { status: 401, code: 'invalid_token' }, 'wrong audience');
  t.same(await get(await sign({ perms: 'configs.list' }, { iss: 'https://evil.test/' })), { status: 401, code: 'invalid_token' }, 'wrong issuer');
  t.same(await get(await sign({ perms: 'configs.list' }, { key: stranger.privateKey })), { status: 401, code: 'invalid_token' }, 'signed by another key');
  t.same(await get(await sign({ perms: 'configs.list', workspace: 'nope' })), { status: 401, code: 'invalid_token' }, 'an unknown workspace claim');
  t.same(await get('not-a-jwt-and-not-a-key'), { status: 401, code: 'invalid_api_key' }, 'anything else is looked up as an API key');

  const chat = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock), 'content-type': 'application/json', 'x-gateway-api-key': good },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'jwt' }] }),
  });
  t.equal(chat.statusCode, 200, 'a token with completions.write calls models');
  await chat.body.text();
  t.notMatch(JSON.stringify(gw.logs), good, 'the token is never logged');
});
