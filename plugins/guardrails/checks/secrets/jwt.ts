/**
 * JSON Web Tokens (JWS compact form, RFC 7515): three base64url parts joined by dots, where the
 * first is a JSON object with an `alg` (its base64url starts `eyJ`, the encoding of `{"`). The
 * header is decoded to tell a token from any dotted identifier; the payload and signature are
 * not (the signature may be empty: `alg: none`).
 */
import type { Finding } from '../../../../core/index.js';
import { isKeyChar } from './provider-keys.js';

/** Headers are a few dozen characters; a longer first part is not worth decoding. */
const MAX_HEADER = 1024;

export function findJwts(text: string): Finding[] {
  const out: Finding[] = [];
  for (let at = text.indexOf('eyJ'); at !== -1; at = text.indexOf('eyJ', at + 1)) {
    if (at > 0 && (isKeyChar(text.charCodeAt(at - 1)) || text[at - 1] === '.')) continue;
    const headerEnd = runEnd(text, at);
    if (text[headerEnd] !== '.' || headerEnd - at > MAX_HEADER) continue;
    const payloadEnd = runEnd(text, headerEnd + 1);
    if (payloadEnd - headerEnd - 1 < 2 || text[payloadEnd] !== '.') continue;
    const end = runEnd(text, payloadEnd + 1);
    if (text[end] === '.' && isKeyChar(text.charCodeAt(end + 1))) continue; // a fourth part: JWE or something else
    if (!isJoseHeader(text.slice(at, headerEnd))) continue;
    out.push({ start: at, end, label: 'JWT' });
    at = end - 1;
  }
  return out;
}

function runEnd(text: string, i: number): number {
  while (i < text.length && isKeyChar(text.charCodeAt(i))) i++;
  return i;
}

function isJoseHeader(part: string): boolean {
  try {
    const header: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}
