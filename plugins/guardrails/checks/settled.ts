/**
 * Where a stream's text is settled for the span checks (`settled` in the check contract): the
 * index from which a span could still start if more text came. Spans of PII and secrets are
 * tokens without whitespace, except numbers written in groups (`+44 20 7946 0958`,
 * `4111 1111 1111 1111`, `DE89 3704 0044 0532 0130 00`), whose groups are joined by one space.
 */

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c || code === 0xa0;
}

function tokenStart(text: string, end: number): number {
  let i = end;
  while (i > 0 && !isSpace(text.charCodeAt(i - 1))) i--;
  return i;
}

function hasDigit(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) return true;
  }
  return false;
}

/**
 * Secrets: the start of the trailing token (a token that ended in whitespace is whole), or of a
 * PEM block still open.
 *
 * @example
 *   tokenSettled('the key is sk-pro') // 11
 *   tokenSettled('the key is ')       // 11
 */
export function tokenSettled(text: string): number {
  let settled = tokenStart(text, text.length);
  const begin = text.lastIndexOf('-----BEGIN');
  if (begin !== -1 && begin < settled && text.indexOf('-----END', begin) === -1) settled = begin;
  return settled;
}

/**
 * PII: the start of the trailing token, extended back over single spaces between groups when
 * either side has a digit (a number in groups may still grow). A text that ends in a space may
 * still get a digit group: the token before it stays open.
 *
 * @example
 *   spacedSettled('call me at +44 20 79') // 8: the number may grow (the word before it waits too)
 *   spacedSettled('see you later')        // 8: only the last word
 */
export function spacedSettled(text: string): number {
  let bStart = tokenStart(text, text.length);
  // The token after the gap: the trailing one, or (text ending in whitespace) the one still to come.
  let bDigit = bStart === text.length ? true : hasDigit(text, bStart, text.length);
  for (;;) {
    let ws = bStart;
    while (ws > 0 && isSpace(text.charCodeAt(ws - 1))) ws--;
    if (ws === 0 || ws === bStart) return bStart;
    // Groups are joined by one space; two spaces or a line break end a number.
    if (bStart - ws > 1 || text.charCodeAt(ws) !== 0x20) return bStart;
    const aStart = tokenStart(text, ws);
    const aDigit = hasDigit(text, aStart, ws);
    if (!aDigit && !bDigit) return bStart;
    bStart = aStart;
    bDigit = aDigit;
  }
}
