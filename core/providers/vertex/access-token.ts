/**
 * Service account → OAuth access token, the two-legged flow Google documents for server-to-server
 * calls (RFC 7523, "JWT bearer grant"):
 *
 *   sign RS256 JWT {iss: client_email, scope: cloud-platform, aud: token_uri, iat, exp: iat+1h}
 *     ─▶ POST token_uri  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>
 *     ◀─ {access_token, expires_in, token_type: "Bearer"}
 *
 * Tokens are cached per service account (a digest of token_uri, e-mail and key) until five
 * minutes before they expire (half their life when that is shorter), so a busy gateway exchanges
 * once an hour per account. Concurrent requests that find no usable token share one in-flight
 * exchange (single flight): a cold start under load costs one call to the token endpoint, not one
 * per request. A failed exchange is not cached; the next request tries again.
 *
 * `token_uri` comes from whoever stored the key, so it passes the gateway's upstream guard like any
 * other URL from a stored record: the static check against `security.custom_hosts` here, and the
 * connect-time address check because the call goes through the gateway's own upstream agent (the
 * {@link TokenServices} the registry hands the adapter). Redirects are not followed.
 *
 * Errors never carry the key, the assertion or a token: 502 `provider_auth_failed` names the HTTP
 * status and Google's short error code (`invalid_grant`) only.
 */
import type { Dispatcher } from 'undici';
import { Errors, isGatewayError } from '../../errors.js';
import { checkUpstreamUrl, type CustomHostPolicy } from '../../upstream/ssrf.js';
import { isRecord } from '../openai-shape.js';
import { SERVICE_ACCOUNT_FIELD, type ServiceAccount } from './service-account.js';

/** What the token exchange needs from the gateway: the URL policy in force and the guarded agent. */
export interface TokenServices {
  /** `security.custom_hosts` of the runtime in force. */
  policy(): CustomHostPolicy;
  /** The gateway's upstream agent (its connector refuses addresses the policy refuses). */
  dispatcher: Dispatcher;
}

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** Google caps an assertion's lifetime at one hour. */
const ASSERTION_LIFETIME_S = 3600;
const REFRESH_MARGIN_MS = 5 * 60_000;
/** The exchange is one small POST; a token endpoint slower than this is down. */
const EXCHANGE_TIMEOUT_MS = 10_000;
/** A token answer is a few hundred bytes; anything past this is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_ACCOUNTS = 256;

interface CachedToken {
  token: string;
  /** Epoch ms after which the token is refreshed (before it actually expires). */
  refreshAt: number;
}

/**
 * The token cache, shared by every runtime (a reload keeps the tokens). Entries are replaced on
 * refresh; the bound only matters for a gateway serving hundreds of distinct service accounts.
 */
export class AccessTokenCache {
  readonly #tokens = new Map<string, CachedToken>();
  readonly #inflight = new Map<string, Promise<string>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A valid access token for `account`: cached, joined to an exchange in flight, or freshly exchanged. */
  get(account: ServiceAccount, services: TokenServices): Promise<string> {
    const cached = this.#tokens.get(account.cacheKey);
    if (cached !== undefined && this.#now() < cached.refreshAt) return Promise.resolve(cached.token);
    let pending = this.#inflight.get(account.cacheKey);
    if (pending === undefined) {
      pending = this.#exchange(account, services).finally(() => this.#inflight.delete(account.cacheKey));
      this.#inflight.set(account.cacheKey, pending);
    }
    return pending;
  }

  /** Drops every cached token (tests; an operator rotating keys gets new digests anyway). */
  clear(): void {
    this.#tokens.clear();
  }

  async #exchange(account: ServiceAccount, services: TokenServices): Promise<string> {
    const { token, expiresIn } = await exchange(account, services);
    const lifetime = expiresIn * 1000;
    const refreshAt = this.#now() + lifetime - Math.min(REFRESH_MARGIN_MS, lifetime / 2);
    if (this.#tokens.size >= MAX_ACCOUNTS && !this.#tokens.has(account.cacheKey)) this.#tokens.delete(this.#tokens.keys().next().value!);
    this.#tokens.set(account.cacheKey, { token, refreshAt });
    return token;
  }
}

/** The process-wide cache the Vertex adapter uses. */
export const accessTokens = new AccessTokenCache();

/** The signed JWT assertion for `account` (exported for tests that check its claims). */
export async function assertionFor(account: ServiceAccount, nowSeconds = Math.floor(Date.now() / 1000)): Promise<string> {
  // jose is loaded with the first token exchange (not with every gateway's start).
  const { importPKCS8, SignJWT } = await import('jose');
  let key: Awaited<ReturnType<typeof importPKCS8>>;
  try {
    key = await importPKCS8(account.privateKey, 'RS256');
  } catch (err) {
    throw Errors.invalidProviderField(`${SERVICE_ACCOUNT_FIELD} is not a usable service-account key: "private_key" is not an RSA PKCS#8 key.`, {
      param: SERVICE_ACCOUNT_FIELD,
      cause: err,
    });
  }
  const header: { alg: 'RS256'; typ: 'JWT'; kid?: string } = { alg: 'RS256', typ: 'JWT' };
  if (account.privateKeyId !== undefined) header.kid = account.privateKeyId;
  return new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
    .setProtectedHeader(header)
    .setIssuer(account.clientEmail)
    .setAudience(account.tokenUri)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(nowSeconds + ASSERTION_LIFETIME_S)
    .sign(key);
}

async function exchange(account: ServiceAccount, services: TokenServices): Promise<{ token: string; expiresIn: number }> {
  const url = new URL(account.tokenUri);
  const refused = checkUpstreamUrl(url, services.policy(), `${SERVICE_ACCOUNT_FIELD}.token_uri`);
  if (refused !== null) throw refused;
  const assertion = await assertionFor(account);
  let status: number;
  let text: string;
  try {
    // undici's index loads with the first token exchange, not at every start (core/upstream/undici.ts).
    const { request } = await import('undici');
    const res = await request(url, {
      method: 'POST',
      dispatcher: services.dispatcher,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
      headersTimeout: EXCHANGE_TIMEOUT_MS,
      bodyTimeout: EXCHANGE_TIMEOUT_MS,
    });
    status = res.statusCode;
    text = await readCapped(res.body);
  } catch (err) {
    if (isGatewayError(err)) throw err;
    throw Errors.providerAuthFailed('Vertex AI: the service account\'s token endpoint could not be reached.', { cause: err });
  }
  const answer = parseJson(text);
  if (status < 200 || status > 299) {
    const code = isRecord(answer) && typeof answer.error === 'string' && /^[a-z_]{1,64}$/.test(answer.error) ? ` (${answer.error})` : '';
    throw Errors.providerAuthFailed(`Vertex AI: the token endpoint refused the service account with HTTP ${status}${code}.`);
  }
  const token = isRecord(answer) ? answer.access_token : undefined;
  const expiresIn = isRecord(answer) ? answer.expires_in : undefined;
  if (typeof token !== 'string' || token.length === 0) {
    throw Errors.providerAuthFailed('Vertex AI: the token endpoint answered without an access token.');
  }
  // Google always says; a missing or odd lifetime is taken as Google's usual hour.
  const seconds = typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : ASSERTION_LIFETIME_S;
  return { token, expiresIn: seconds };
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw Errors.providerAuthFailed('Vertex AI: the token endpoint\'s answer is too large to be a token.');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
