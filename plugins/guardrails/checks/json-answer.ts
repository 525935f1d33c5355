/**
 * The JSON an answer carries: the whole text, or the content of its first fenced block
 * (```` ```json ```` first, else a bare ```` ``` ````), the way models wrap JSON in prose. Found
 * with `indexOf` only, so a text full of fences costs one pass.
 */

export type JsonAnswer = { ok: true; value: unknown } | { ok: false; reason: string };

export function parseJsonAnswer(text: string): JsonAnswer {
  const whole = tryParse(text.trim());
  if (whole.ok) return whole;
  const block = fencedBlock(text, '```json') ?? fencedBlock(text, '```');
  if (block === undefined) return { ok: false, reason: 'The answer is not JSON and holds no fenced JSON block.' };
  const inner = tryParse(block.trim());
  return inner.ok ? inner : { ok: false, reason: 'The fenced block in the answer is not valid JSON.' };
}

function tryParse(text: string): JsonAnswer {
  if (text === '') return { ok: false, reason: 'The answer is empty.' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'The answer is not valid JSON.' };
  }
}

/** The content of the first block opened by `fence` (case-insensitive) on its own line, up to the next ```` ``` ````. */
function fencedBlock(text: string, fence: string): string | undefined {
  const lower = fence === '```' ? text : text.toLowerCase();
  let at = lower.indexOf(fence);
  while (at !== -1) {
    const lineEnd = text.indexOf('\n', at + fence.length);
    if (lineEnd === -1) return undefined;
    // The rest of the opening line may only be spaces (a `json` info string for the bare fence).
    const info = text.slice(at + fence.length, lineEnd).trim().toLowerCase();
    if (info === '' || (fence === '```' && info === 'json')) {
      const close = text.indexOf('```', lineEnd + 1);
      if (close === -1) return undefined;
      return text.slice(lineEnd + 1, close);
    }
    at = lower.indexOf(fence, lineEnd);
  }
  return undefined;
}
