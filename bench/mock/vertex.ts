/**
 * Google Cloud Vertex AI, in its exact wire formats, plus the OAuth token endpoint a service
 * account is exchanged at:
 *
 *   POST /token                    grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>
 *                                  → {access_token, expires_in, token_type: "Bearer"}
 *   POST /v1/projects/<p>/locations/<r>/publishers/google/models/<m>:generateContent
 *                                  :streamGenerateContent?alt=sse   (Gemini bodies, gemini.ts)
 *                                  :predict                         (text embeddings)
 *   POST /v1/projects/<p>/locations/<r>/publishers/anthropic/models/<m>:rawPredict
 *                                  :streamRawPredict                (Anthropic bodies, anthropic.ts)
 *
 * Token endpoint: the assertion is decoded and its header and claims checked as Google does
 * (RS256, `iss` an e-mail, `aud` exactly the URL called, `scope` cloud-platform, `exp` at most an
 * hour after `iat`); the signature is not checked here (the mock has no public key: tests verify
 * it on the recorded request). `?expires_in=N` sets the token's lifetime (default 3599), so tests
 * control expiry. Refusals are OAuth-shaped: `{error: "invalid_grant", error_description}`.
 *
 * Model paths answer 401 in Google's shape unless `Authorization: Bearer` carries a token this
 * mock issued (self-verifying: an HMAC under a per-process secret) or {@link VERTEX_DIRECT_TOKEN}.
 * Claude bodies must carry `anthropic_version: "vertex-2023-10-16"` and no `model` (the path
 * names it); a streamed call must say `stream: true` to `:streamRawPredict`.
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { anthropicDialect, anthropicErrorBody, messagesRoute } from './anthropic.js';
import { embedText } from './embedding.js';
import { generateContentRoute, geminiDialect, geminiErrorBody } from './gemini.js';
import type { Dialect, JsonObject, JsonReply, MockReply, MockRequest, Route } from './route.js';
import { estimateTokens, isRecord } from './text.js';

/** An access token a direct-mode test passes as its provider key; the mock accepts it as issued. */
export const VERTEX_DIRECT_TOKEN = 'ya29.mock-direct-mode-access-token-0001';

const TOKEN_PATH = '/token';
const MODEL_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const DEFAULT_EXPIRES_IN = 3599;
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Issued tokens carry their own proof: `ya29.mock.<nonce>.<hmac(nonce)>` under this process's secret. */
const SECRET = randomBytes(32);

function sign(nonce: string): string {
  return createHmac('sha256', SECRET).update(nonce).digest('base64url');
}

function issueToken(): string {
  const nonce = randomBytes(12).toString('base64url');
  return `ya29.mock.${nonce}.${sign(nonce)}`;
}

function isIssued(token: string): boolean {
  if (token === VERTEX_DIRECT_TOKEN) return true;
  const parts = token.split('.');
  if (parts.length !== 4 || parts[0] !== 'ya29' || parts[1] !== 'mock') return false;
  const expected = Buffer.from(sign(parts[2]!));
  const got = Buffer.from(parts[3]!);
  return expected.length === got.length && timingSafeEqual(expected, got);
}

// ── token endpoint ──────────────────────────────────────────────────────────────────────────────

function oauthError(status: number, error: string, description: string): JsonReply {
  return { kind: 'json', status, body: { error, error_description: description } };
}

const oauthDialect: Dialect = {
  name: 'google-oauth',
  errorReply(status) {
    if (status === 401 || status === 403) return oauthError(status, 'unauthorized_client', 'The client is not authorized.');
    if (status >= 500) return oauthError(status, 'internal_failure', 'Backend error.');
    return oauthError(status, 'invalid_grant', 'Invalid grant: account not found');
  },
  invalidJson() {
    return oauthError(400, 'invalid_request', 'Invalid request.');
  },
};

function decodeSegment(segment: string | undefined): JsonObject | undefined {
  if (segment === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function token(request: MockRequest): MockReply {
  const form = new URLSearchParams(request.body.toString('utf8'));
  if (!String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    return oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded.');
  }
  if (form.get('grant_type') !== GRANT_TYPE) return oauthError(400, 'unsupported_grant_type', 'Invalid grant_type.');
  const parts = (form.get('assertion') ?? '').split('.');
  const header = decodeSegment(parts[0]);
  const claims = decodeSegment(parts[1]);
  if (parts.length !== 3 || header === undefined || claims === undefined || parts[2]!.length === 0) {
    return oauthError(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.');
  }
  if (header.alg !== 'RS256') return oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
  if (typeof claims.iss !== 'string' || !claims.iss.includes('@')) return oauthError(400, 'invalid_grant', 'Invalid JWT: iss is not a service account.');
  const called = `http://${String(request.headers.host)}${request.url}`;
  if (claims.aud !== called) return oauthError(400, 'invalid_grant', 'Invalid JWT: aud must be the token endpoint.');
  if (claims.scope !== SCOPE) return oauthError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  const now = Math.floor(Date.now() / 1000);
  const iat = claims.iat;
  const exp = claims.exp;
  if (typeof iat !== 'number' || typeof exp !== 'number' || Math.abs(iat - now) > 300 || exp <= iat || exp - iat > 3600) {
    return oauthError(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
  }
  const lifetime = Number.parseInt(new URLSearchParams(request.query).get('expires_in') ?? '', 10);
  const expiresIn = Number.isFinite(lifetime) && lifetime > 0 ? lifetime : DEFAULT_EXPIRES_IN;
  return { kind: 'json', status: 200, body: { access_token: issueToken(), expires_in: expiresIn, token_type: 'Bearer' } };
}

const tokenRoute: Route = { dialect: oauthDialect, json: false, handle: token };

// ── model paths ─────────────────────────────────────────────────────────────────────────────────

function googleError(code: number, status: string, message: string): JsonReply {
  return { kind: 'json', status: code, body: geminiErrorBody(code, status, message) };
}

/** Vertex's front door checks the OAuth token before any publisher sees the call. */
function authorize(request: MockRequest): MockReply | undefined {
  const auth = request.headers.authorization;
  const match = typeof auth === 'string' ? /^Bearer (\S+)$/.exec(auth) : null;
  if (match !== null && isIssued(match[1]!)) return undefined;
  return googleError(
    401,
    'UNAUTHENTICATED',
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  );
}

function google(request: MockRequest): MockReply {
  const [, , , , model, method] = MODEL_PATH.exec(request.pathname)!;
  if (method === 'predict') return predict(request.json);
  if (method !== 'generateContent' && method !== 'streamGenerateContent') return googleError(404, 'NOT_FOUND', `Method ${method} is not found.`);
  if (method === 'streamGenerateContent' && new URLSearchParams(request.query).get('alt') !== 'sse') {
    return googleError(400, 'INVALID_ARGUMENT', 'This mock streams server-sent events only: add ?alt=sse.');
  }
  // The Gemini API answers the same bodies: reuse it, as if called there with a key.
  return generateContentRoute.handle({
    ...request,
    pathname: `/v1beta/models/${model}:${method}`,
    query: '',
    headers: { ...request.headers, 'x-goog-api-key': 'vertex-mock' },
  });
}

/** Text embeddings: `{instances:[{content}], parameters?:{outputDimensionality}}`. */
function predict(body: JsonObject): MockReply {
  if (!Array.isArray(body.instances) || body.instances.length === 0) return googleError(400, 'INVALID_ARGUMENT', 'instances must not be empty.');
  const parameters = isRecord(body.parameters) ? body.parameters : {};
  const dimensions = typeof parameters.outputDimensionality === 'number' ? parameters.outputDimensionality : 768;
  const predictions: JsonObject[] = [];
  let characters = 0;
  for (const [i, instance] of (body.instances as unknown[]).entries()) {
    if (!isRecord(instance) || typeof instance.content !== 'string') {
      return googleError(400, 'INVALID_ARGUMENT', `instances[${i}].content must be a string.`);
    }
    characters += instance.content.length;
    predictions.push({
      embeddings: { values: Array.from(embedText(instance.content, dimensions)), statistics: { truncated: false, token_count: estimateTokens(instance.content) } },
    });
  }
  return { kind: 'json', status: 200, body: { predictions, metadata: { billableCharacterCount: characters } } };
}

function anthropicError(message: string): JsonReply {
  return { kind: 'json', status: 400, body: anthropicErrorBody('invalid_request_error', message) };
}

function anthropic(request: MockRequest): MockReply {
  const [, , , , model, method] = MODEL_PATH.exec(request.pathname)!;
  if (method !== 'rawPredict' && method !== 'streamRawPredict') return googleError(404, 'NOT_FOUND', `Method ${method} is not found.`);
  const { anthropic_version: version, ...body } = request.json;
  if (version !== VERTEX_ANTHROPIC_VERSION) return anthropicError(`anthropic_version: Input should be '${VERTEX_ANTHROPIC_VERSION}'`);
  if ('model' in body) return anthropicError('model: Extra inputs are not permitted');
  if ((method === 'streamRawPredict') !== (body.stream === true)) {
    return anthropicError(`stream: ${method} needs stream ${method === 'streamRawPredict' ? 'true' : 'absent or false'}`);
  }
  // Anthropic's own Messages API answers the same bodies: reuse it, as if called there.
  return messagesRoute.handle({
    ...request,
    headers: { ...request.headers, 'x-api-key': 'vertex-mock', 'anthropic-version': '2023-06-01' },
    json: { ...body, model: decodeURIComponent(model!) },
  });
}

const googleRoute: Route = { dialect: geminiDialect, json: true, authorize, handle: google };
const anthropicRoute: Route = { dialect: anthropicDialect, json: true, authorize, handle: anthropic };

/**
 * The Vertex route for a request, or undefined when the path is not Vertex's.
 *
 * @example
 *   vertexRoute('POST', '/token') // the token endpoint
 */
export function vertexRoute(method: string, pathname: string): Route | undefined {
  if (method !== 'POST') return undefined;
  if (pathname === TOKEN_PATH) return tokenRoute;
  const match = MODEL_PATH.exec(pathname);
  if (match === null) return undefined;
  return match[3] === 'anthropic' ? anthropicRoute : googleRoute;
}
