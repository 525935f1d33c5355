/**
 * AWS Signature Version 4, verify side: the mock recomputes what an AWS service would and
 * refuses a request whose signature differs, the way Bedrock does.
 *
 * Written by hand with node:crypto from AWS's "Signature Version 4" documentation (create a
 * canonical request, create a string to sign, derive the signing key, compute the signature), and
 * deliberately not with an AWS library: the gateway signs with one, so an independent
 * implementation is what catches a canonicalisation mistake on either side.
 *
 *   canonical request = METHOD \n canonical URI \n canonical query \n canonical headers \n
 *                       signed header names \n hex(sha256(body))
 *   string to sign    = AWS4-HMAC-SHA256 \n x-amz-date \n date/region/service/aws4_request \n
 *                       hex(sha256(canonical request))
 *   signing key       = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")
 *   signature         = hex(HMAC(signing key, string to sign))
 *
 * The canonical URI takes the path exactly as it came over the wire and URI-encodes each segment
 * once more: every service but S3 signs the path encoded twice, so a model id sent as
 * `anthropic.claude-v2%3A1` is signed as `anthropic.claude-v2%253A1`.
 */

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The one access key id the mock knows. Use it with {@link MOCK_AWS_SECRET_ACCESS_KEY}. */
export const MOCK_AWS_ACCESS_KEY_ID = 'AKIAMOCKGATEWAY00001';
export const MOCK_AWS_SECRET_ACCESS_KEY = 'mockSecret/K7MDENG+bPxRfiCYMOCKKEY0000';

const ALGORITHM = 'AWS4-HMAC-SHA256';
const TERMINATOR = 'aws4_request';
/** AWS refuses a request whose x-amz-date is more than five minutes from its clock, either way. */
const MAX_SKEW_MS = 5 * 60_000;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const MOCK_SECRETS: ReadonlyMap<string, string> = new Map([[MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY]]);

/** The parts of a request that a signature covers, as the server received them. */
export interface SignableRequest {
  readonly method: string;
  /** Path and query exactly as sent on the wire, e.g. `/model/a%3Ab/converse?x=1`. */
  readonly target: string;
  /** Node's flat `[name, value, …]` list, so repeated headers join the way AWS joins them. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer | string;
}

export interface SigningParams {
  /** Lower-case header names in the order of the `SignedHeaders` list. */
  readonly signedHeaders: readonly string[];
  /** `yyyymmddThhmmssZ`; the scope's date is its first eight characters. */
  readonly amzDate: string;
  readonly region: string;
  readonly service: string;
  readonly secretAccessKey: string;
}

export type SigV4ErrorCode =
  | 'MissingAuthenticationTokenException'
  | 'IncompleteSignatureException'
  | 'UnrecognizedClientException'
  | 'InvalidSignatureException';

/** Why a request was refused; every refusal is an HTTP 403 at AWS. */
export interface SigV4Error {
  readonly code: SigV4ErrorCode;
  readonly message: string;
}

export type SigV4Result =
  | { readonly ok: true; readonly accessKeyId: string; readonly region: string }
  | { readonly ok: false; readonly error: SigV4Error };

export interface VerifyOptions {
  /** The service the credential scope must name, e.g. `bedrock`. */
  readonly service: string;
  /** Secret per access key id; defaults to the mock's single pair. */
  readonly secrets?: ReadonlyMap<string, string>;
  /** The verifier's clock in ms since the epoch, for the five-minute window; default now. */
  readonly now?: number;
}

interface Authorization {
  readonly accessKeyId: string;
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

/**
 * The SigV4 signature (lower-case hex) of a request.
 *
 * @example
 * signatureV4(
 *   { method: 'GET', target: '/', rawHeaders: ['Host', 'example.amazonaws.com', 'X-Amz-Date', '20150830T123600Z'], body: '' },
 *   { signedHeaders: ['host', 'x-amz-date'], amzDate: '20150830T123600Z', region: 'us-east-1', service: 'service', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
 * ) // '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31' (AWS's get-vanilla vector)
 */
export function signatureV4(request: SignableRequest, params: SigningParams): string {
  const date = params.amzDate.slice(0, 8);
  const scope = `${date}/${params.region}/${params.service}/${TERMINATOR}`;
  const stringToSign = `${ALGORITHM}\n${params.amzDate}\n${scope}\n${sha256Hex(canonicalRequest(request, params.signedHeaders))}`;
  let key = hmac(`AWS4${params.secretAccessKey}`, date);
  key = hmac(key, params.region);
  key = hmac(key, params.service);
  key = hmac(key, TERMINATOR);
  return hmac(key, stringToSign).toString('hex');
}

/** The canonical request, the first thing both sides must agree on; exported for diagnostics. */
export function canonicalRequest(request: SignableRequest, signedHeaders: readonly string[]): string {
  const queryAt = request.target.indexOf('?');
  const path = queryAt === -1 ? request.target : request.target.slice(0, queryAt);
  const query = queryAt === -1 ? '' : request.target.slice(queryAt + 1);
  const values = headerValues(request.rawHeaders, signedHeaders);
  let headers = '';
  for (const name of [...signedHeaders].sort()) headers += `${name}:${values.get(name) ?? ''}\n`;
  return [
    request.method.toUpperCase(),
    canonicalUri(path),
    canonicalQuery(query),
    headers,
    signedHeaders.join(';'),
    sha256Hex(request.body),
  ].join('\n');
}

/**
 * Verifies a request's `Authorization: AWS4-HMAC-SHA256 …` header, checking, in AWS's order:
 * presence and shape, a known access key id, the scope's service and date, that `host`,
 * `x-amz-date` and any `x-amz-security-token` are signed, the five-minute clock window, and last
 * the signature itself. Any session token value is accepted.
 *
 * @example
 * const result = verifySigV4({ method, target: req.url, rawHeaders: req.rawHeaders, body }, { service: 'bedrock' });
 * if (!result.ok) reply(403, result.error.code, result.error.message);
 */
export function verifySigV4(request: SignableRequest, options: VerifyOptions): SigV4Result {
  const header = (name: string): string | undefined => firstHeader(request.rawHeaders, name);
  const raw = header('authorization');
  if (raw === undefined) return refuse('MissingAuthenticationTokenException', 'Missing Authentication Token');
  const amzDate = header('x-amz-date');
  const parsed = parseAuthorization(raw, amzDate);
  if (typeof parsed === 'string') return refuse('IncompleteSignatureException', parsed);

  const secret = (options.secrets ?? MOCK_SECRETS).get(parsed.accessKeyId);
  if (secret === undefined) return refuse('UnrecognizedClientException', 'The security token included in the request is invalid.');
  if (parsed.service !== options.service) {
    return refuse('InvalidSignatureException', `Credential should be scoped to correct service: '${options.service}'. `);
  }
  const signedAt = amzDate === undefined ? undefined : parseAmzDate(amzDate);
  if (amzDate === undefined || signedAt === undefined) {
    return refuse('IncompleteSignatureException', `Date must be in ISO-8601 'basic format'. Got '${amzDate ?? ''}'.`);
  }
  if (parsed.date !== amzDate.slice(0, 8)) {
    return refuse(
      'InvalidSignatureException',
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${parsed.date}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`,
    );
  }
  for (const required of ['host', 'x-amz-date']) {
    if (!parsed.signedHeaders.includes(required)) {
      return refuse('InvalidSignatureException', `'${required}' must be a 'SignedHeader' in the AWS Authorization.`);
    }
  }
  if (header('x-amz-security-token') !== undefined && !parsed.signedHeaders.includes('x-amz-security-token')) {
    return refuse('InvalidSignatureException', "'x-amz-security-token' must be a 'SignedHeader' in the AWS Authorization.");
  }

  const now = options.now ?? Date.now();
  if (signedAt < now - MAX_SKEW_MS) {
    return refuse('InvalidSignatureException', `Signature expired: ${amzDate} is now earlier than ${amzDateOf(now - MAX_SKEW_MS)} (${amzDateOf(now)} - 5 min.)`);
  }
  if (signedAt > now + MAX_SKEW_MS) {
    return refuse('InvalidSignatureException', `Signature not yet current: ${amzDate} is still later than ${amzDateOf(now + MAX_SKEW_MS)} (${amzDateOf(now)} + 5 min.)`);
  }

  const expected = signatureV4(request, {
    signedHeaders: parsed.signedHeaders,
    amzDate,
    region: parsed.region,
    service: parsed.service,
    secretAccessKey: secret,
  });
  if (!sameHex(expected, parsed.signature)) {
    return refuse(
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    );
  }
  return { ok: true, accessKeyId: parsed.accessKeyId, region: parsed.region };
}

/**
 * `AWS4-HMAC-SHA256 Credential=<id>/<date>/<region>/<service>/aws4_request, SignedHeaders=a;b, Signature=<hex>`,
 * or the reason it is incomplete, phrased the way AWS lists missing parts.
 */
function parseAuthorization(raw: string, amzDate: string | undefined): Authorization | string {
  const space = raw.indexOf(' ');
  const algorithm = space === -1 ? raw : raw.slice(0, space);
  const fields = new Map<string, string>();
  if (algorithm === ALGORITHM) {
    for (const part of raw.slice(space + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq !== -1) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
  }
  const missing: string[] = [];
  for (const field of ['Credential', 'Signature', 'SignedHeaders']) {
    if (!fields.get(field)) missing.push(`Authorization header requires '${field}' parameter.`);
  }
  if (amzDate === undefined) missing.push("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  if (missing.length > 0) return `${missing.join(' ')} Authorization=${raw}`;

  const scope = fields.get('Credential')!.split('/');
  // The defaults never apply: the length test below rejects a scope without all five parts.
  const [accessKeyId = '', date = '', region = '', service = '', terminator] = scope;
  if (scope.length !== 5 || terminator !== TERMINATOR || scope.some((part) => part.length === 0)) {
    return `Credential should be scoped to a valid region, service and terminator. Credential=${fields.get('Credential')}`;
  }
  return {
    accessKeyId,
    date,
    region,
    service,
    signedHeaders: fields.get('SignedHeaders')!.split(';').map((name) => name.trim().toLowerCase()),
    signature: fields.get('Signature')!,
  };
}

/** Each path segment URI-encoded once more; an empty path is `/`. */
function canonicalUri(path: string): string {
  if (path.length === 0) return '/';
  return path.split('/').map(uriEncode).join('/');
}

/** Parameters decoded, re-encoded strictly, sorted by name then value, joined with `&`. */
function canonicalQuery(query: string): string {
  if (query.length === 0) return '';
  const pairs: Array<[string, string]> = [];
  for (const part of query.split('&')) {
    if (part.length === 0) continue;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const value = eq === -1 ? '' : part.slice(eq + 1);
    pairs.push([uriEncode(percentDecode(name)), uriEncode(percentDecode(value))]);
  }
  pairs.sort((a, b) => compare(a[0], b[0]) || compare(a[1], b[1]));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/**
 * The values of the wanted headers: each trimmed with inner whitespace runs collapsed to one
 * space, repeats joined with `,` in the order received.
 */
function headerValues(rawHeaders: readonly string[], wanted: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const rawName = rawHeaders[i];
    const rawValue = rawHeaders[i + 1];
    // Node's list is always name, value pairs; a hand-built odd list ends at its unpaired name.
    if (rawName === undefined || rawValue === undefined) break;
    const name = rawName.toLowerCase();
    if (!wanted.includes(name)) continue;
    const value = rawValue.trim().replace(/\s+/g, ' ');
    const previous = values.get(name);
    values.set(name, previous === undefined ? value : `${previous},${value}`);
  }
  return values;
}

function firstHeader(rawHeaders: readonly string[], name: string): string | undefined {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name) return rawHeaders[i + 1];
  }
  return undefined;
}

/** RFC 3986 encoding over UTF-8 bytes: only `A-Z a-z 0-9 - . _ ~` stay as they are. */
function uriEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const unreserved =
      (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) ||
      byte === 0x2d || byte === 0x2e || byte === 0x5f || byte === 0x7e;
    out += unreserved ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Percent-decoding that leaves a malformed escape as it is instead of throwing. */
function percentDecode(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Code-point (byte) order, as AWS sorts; `localeCompare` would not be. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseAmzDate(value: string): number | undefined {
  const m = AMZ_DATE.exec(value);
  if (m === null) return undefined;
  // Number(undefined) is NaN, so a group that did not match fails the NaN test below.
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(ms) ? undefined : ms;
}

function amzDateOf(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuse(code: SigV4ErrorCode, message: string): SigV4Result {
  return { ok: false, error: { code, message } };
}
