/**
 * AWS Bedrock Runtime's Converse API as an OpenAI dialect.
 *
 *   OpenAI chat request ─► request.ts ─► POST {base}/model/<model id>/converse (or /converse-stream)
 *   OpenAI embeddings ───► request.ts ─► POST {base}/model/<model id>/invoke  (Titan, Cohere)
 *   Converse JSON ───────► response.ts ─► chat.completion / embeddings list
 *   event stream ─► event-stream.ts ─► stream.ts ─► chat.completion.chunk … [DONE]
 *   Bedrock error ───────► errors.ts ─► {error:{message,type,param,code}}
 *
 * Base URL: `https://bedrock-runtime.<aws_region>.amazonaws.com`, or the target's custom host.
 * Auth, from the target's provider fields (virtual key, config target, or `x-gateway-aws-*`
 * headers in direct mode):
 * - `aws_access_key_id` + `aws_secret_access_key` (+ `aws_session_token`): every call is signed
 *   with SigV4 (service `bedrock`) after the plugins had their say, so the signature covers the
 *   call exactly as sent;
 * - otherwise the target's API key is a Bedrock API key, sent as `Authorization: Bearer`.
 */
import { createRequire } from 'node:module';
import type { SignatureV4 } from '@smithy/signature-v4';
import { Errors } from '../../errors.js';
import type { Target } from '../../router/types.js';
import type { ProviderAdapter, SignableRequest, Translator, UrlInput } from '../types.js';
import { assertProviderField } from '../fields.js';
import { openaiError } from './errors.js';
import { awsEventStream } from './event-stream.js';
import { buildRequest } from './request.js';
import { buildResponse } from './response.js';
import { createStreamTranslator } from './stream.js';

function field(target: Target, name: string): string | undefined {
  const v = target.providerOptions?.[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function region(target: Target): string | undefined {
  return field(target, 'aws_region');
}

function bedrockUrl({ target, upstreamPath, search }: UrlInput): string {
  const where = region(target);
  if (target.customHost === undefined && where === undefined) {
    throw Errors.invalidHeader('Bedrock needs aws_region (or a custom host).', { param: 'x-gateway-aws-region' });
  }
  // A region is a host name part; `x@127.0.0.1:9300/` would turn the rest into userinfo.
  assertProviderField('aws_region', where);
  const base = (target.customHost ?? `https://bedrock-runtime.${where}.amazonaws.com`).replace(/\/+$/, '');
  return base + upstreamPath + search;
}

function hasSigningKeys(target: Target): boolean {
  return field(target, 'aws_access_key_id') !== undefined && field(target, 'aws_secret_access_key') !== undefined;
}

/**
 * The AWS signer, loaded with the first signer made (the @smithy modules took about 0.1 s of every
 * gateway's start), with Node's native SHA-256 (as the AWS SDK uses in Node; the pure-JS hashes
 * cost several times more per call).
 */
const require = createRequire(import.meta.url);
interface Signing {
  SignatureV4: typeof SignatureV4;
  sha256: ConstructorParameters<typeof SignatureV4>[0]['sha256'];
}
let smithy: Signing | undefined;
function signing(): Signing {
  if (smithy === undefined) {
    const { SignatureV4 } = require('@smithy/signature-v4') as typeof import('@smithy/signature-v4');
    const { Hash } = require('@smithy/hash-node') as typeof import('@smithy/hash-node');
    smithy = { SignatureV4, sha256: Hash.bind(null, 'sha256') };
  }
  return smithy;
}

/** Signers by credentials: each caches its derived signing key for the day, so it is reused. */
const signers = new Map<string, SignatureV4>();
const MAX_SIGNERS = 256;

function signerFor(region: string, accessKeyId: string, secretAccessKey: string, sessionToken: string | undefined): SignatureV4 {
  const key = `${region}\0${accessKeyId}\0${secretAccessKey}\0${sessionToken ?? ''}`;
  let signer = signers.get(key);
  if (signer === undefined) {
    if (signers.size >= MAX_SIGNERS) signers.delete(signers.keys().next().value!);
    const { SignatureV4, sha256 } = signing();
    signer = new SignatureV4({ service: 'bedrock', region, sha256, credentials: { accessKeyId, secretAccessKey, sessionToken } });
    signers.set(key, signer);
  }
  return signer;
}

/** Signs `host`, `content-type` and the `x-amz-*` headers; the rest travel unsigned, as AWS allows. */
async function sign(request: SignableRequest, target: Target): Promise<Record<string, string>> {
  if (!hasSigningKeys(target)) return {};
  const where = region(target);
  if (where === undefined) throw Errors.invalidHeader('Bedrock SigV4 signing needs aws_region.', { param: 'x-gateway-aws-region' });
  const signer = signerFor(where, field(target, 'aws_access_key_id')!, field(target, 'aws_secret_access_key')!, field(target, 'aws_session_token'));
  const { url } = request;
  const headers: Record<string, string> = { host: url.host };
  const ctype = request.headers['content-type'];
  if (ctype !== undefined) headers['content-type'] = ctype;
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: url.pathname,
    query,
    headers,
    body: request.body ?? undefined,
  });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) {
    if (name !== 'host' && name !== 'content-type') out[name] = value;
  }
  return out;
}

const translate: Translator = {
  routes: new Set(['chat.completions', 'embeddings']),
  request: buildRequest,
  response: (ctx, body) => buildResponse(ctx, body),
  stream: (ctx) => createStreamTranslator(ctx),
  error: (_ctx, status, body, headers) => ({ ...openaiError(status, body, headers) }),
  streamDecoder: awsEventStream,
};

/**
 * @example
 *   // targets: [{ provider: bedrock, aws_region: us-east-1, aws_access_key_id: AKIA…, aws_secret_access_key: … }]
 *   // direct: x-gateway-provider: bedrock, x-gateway-aws-region: us-east-1, x-gateway-aws-access-key-id: …
 */
export const bedrock: ProviderAdapter = {
  id: 'bedrock',
  baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com',
  routes: translate.routes,
  url: bedrockUrl,
  authHeaders(target): Record<string, string> {
    if (hasSigningKeys(target) || target.apiKey === undefined) return {};
    return { authorization: `Bearer ${target.apiKey}` };
  },
  sign,
  translate,
};
