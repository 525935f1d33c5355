/**
 * A Google Cloud service-account key (the JSON file the console downloads), as a Vertex AI target
 * carries it in `vertex_service_account_json`: an object (virtual keys, configs, where it is stored
 * sealed) or the same JSON as a string.
 *
 * Only the members the token exchange needs are read: `client_email` (the JWT's issuer),
 * `private_key` (PKCS#8 PEM, RS256), `token_uri` (the JWT's audience and where it is posted;
 * Google's `https://oauth2.googleapis.com/token` when absent) and `private_key_id` (the JWT's `kid`).
 *
 * A malformed key is a 400 `invalid_provider_field` that names the member at fault, never its
 * value: the message must not carry any part of the private key.
 */
import { createHash } from 'node:crypto';
import { Errors } from '../../errors.js';
import { isRecord, stringField } from '../openai-shape.js';

/** The field that holds the key, as configs, virtual keys and the admin API name it. */
export const SERVICE_ACCOUNT_FIELD = 'vertex_service_account_json';

/** Google's token endpoint, the `token_uri` of every key Google issues. */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

export interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId: string | undefined;
  tokenUri: string;
  /** Identifies this key in the token cache: a digest, so the cache holds no key material. */
  cacheKey: string;
}

/** Parsed keys by the object (or string) they came from: a virtual key's options are reused per request. */
const parsed = new WeakMap<object, ServiceAccount>();
const parsedText = new Map<string, ServiceAccount>();
const MAX_PARSED_TEXT = 64;

function invalid(what: string): Error {
  return Errors.invalidProviderField(`${SERVICE_ACCOUNT_FIELD} is not a usable service-account key: ${what}`, { param: SERVICE_ACCOUNT_FIELD });
}

/**
 * The service account of a target's provider fields, undefined when it has none.
 * Throws a 400 `invalid_provider_field` when one is there but unusable.
 *
 * @example
 *   const account = serviceAccountOf(target.providerOptions); // { clientEmail, tokenUri, … } | undefined
 */
export function serviceAccountOf(fields: Readonly<Record<string, unknown>> | undefined): ServiceAccount | undefined {
  const raw = fields?.[SERVICE_ACCOUNT_FIELD];
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'string') {
    let account = parsedText.get(raw);
    if (account === undefined) {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        throw invalid('it is not valid JSON.');
      }
      account = fromObject(value);
      if (parsedText.size >= MAX_PARSED_TEXT) parsedText.clear();
      parsedText.set(raw, account);
    }
    return account;
  }
  if (!isRecord(raw)) throw invalid('it must be a JSON object.');
  let account = parsed.get(raw);
  if (account === undefined) parsed.set(raw, (account = fromObject(raw)));
  return account;
}

function fromObject(value: unknown): ServiceAccount {
  if (!isRecord(value)) throw invalid('it must be a JSON object.');
  if (value.type !== undefined && value.type !== 'service_account') throw invalid('"type" must be "service_account".');
  const clientEmail = stringField(value, 'client_email');
  if (clientEmail === undefined || !clientEmail.includes('@')) throw invalid('"client_email" is missing or not an e-mail address.');
  const privateKey = stringField(value, 'private_key');
  if (privateKey === undefined || !privateKey.includes('-----BEGIN PRIVATE KEY-----')) {
    throw invalid('"private_key" is missing or not a PKCS#8 PEM key.');
  }
  const tokenUri = stringField(value, 'token_uri') ?? GOOGLE_TOKEN_URI;
  if (!URL.canParse(tokenUri)) throw invalid('"token_uri" is not a URL.');
  const privateKeyId = stringField(value, 'private_key_id');
  const cacheKey = createHash('sha256').update(`${tokenUri}\0${clientEmail}\0${privateKey}`).digest('base64url');
  return { clientEmail, privateKey, privateKeyId, tokenUri, cacheKey };
}
