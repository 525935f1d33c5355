/**
 * PEM private keys (RFC 7468): `-----BEGIN … PRIVATE KEY-----` through the matching `-----END …
 * PRIVATE KEY-----` (RSA, EC, DSA, OPENSSH, ENCRYPTED, plain PKCS #8). A block is at most
 * {@link MAX_PEM_LENGTH} characters (a 8192-bit RSA key is about 6.5 kB). A block with no END
 * in reach (cut off, or a stream still arriving) runs to the end of its base64 lines, so the key
 * material is covered either way.
 */
import type { Finding } from '../../../../core/index.js';

export const MAX_PEM_LENGTH = 8192;
const BEGIN = '-----BEGIN ';
const END = '-----END ';
const TAIL = 'PRIVATE KEY-----';
/** `ENCRYPTED `, `OPENSSH `, `RSA `, …: the words before PRIVATE KEY are short. */
const MAX_KIND = 24;

export function findPrivateKeys(text: string): Finding[] {
  const out: Finding[] = [];
  for (let at = text.indexOf(BEGIN); at !== -1; at = text.indexOf(BEGIN, at + 1)) {
    const headerEnd = tailAfter(text, at + BEGIN.length);
    if (headerEnd === null) continue;
    // A block ends before the next one begins: each stretch of text is searched once.
    const next = text.indexOf(BEGIN, headerEnd);
    const limit = Math.min(at + MAX_PEM_LENGTH, next === -1 ? text.length : next);
    const close = text.slice(headerEnd, limit).indexOf(END);
    const closeEnd = close === -1 ? null : tailAfter(text, headerEnd + close + END.length);
    const end = closeEnd !== null && closeEnd <= at + MAX_PEM_LENGTH ? closeEnd : bodyEnd(text, headerEnd, limit);
    out.push({ start: at, end, label: 'PRIVATE_KEY' });
    at = end - 1;
  }
  return out;
}

/** Where `[A-Z0-9 ]{0,24}PRIVATE KEY-----` starting at `i` ends, or null. */
function tailAfter(text: string, i: number): number | null {
  const window = text.slice(i, i + MAX_KIND + TAIL.length);
  const t = window.indexOf(TAIL);
  if (t === -1) return null;
  for (let k = 0; k < t; k++) {
    const c = window.charCodeAt(k);
    if (!((c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x20)) return null;
  }
  return i + t + TAIL.length;
}

/**
 * The end of the lines after the header that look like PEM content: base64, blank, or an RFC 1421
 * header (`Proc-Type: …`, `DEK-Info: …`). Stops at the first line of anything else (prose).
 */
function bodyEnd(text: string, from: number, limit: number): number {
  let end = from;
  let at = from;
  const stop = Math.min(text.length, limit);
  while (at < stop) {
    let lineEnd = text.indexOf('\n', at);
    if (lineEnd === -1 || lineEnd > stop) lineEnd = stop;
    const line = text.slice(at, lineEnd).trim();
    if (!(line === '' || /^[A-Za-z0-9+/=]+$/.test(line) || /^[A-Za-z-]+: [ -~]*$/.test(line))) break;
    if (line !== '') end = at + text.slice(at, lineEnd).trimEnd().length;
    at = lineEnd + 1;
  }
  return Math.min(end, stop);
}
