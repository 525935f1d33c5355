/**
 * The text a semantic lookup embeds, and the body with that text blanked (for the partition).
 *
 *   chat.completions  the last user message (a string, or its text parts joined)
 *   completions       the prompt (a string, or strings joined)
 *   responses         `input` as a string, or its last user message
 *
 * Only text is blanked: an image part stays in the partition, so two questions with the same
 * words about different images never match each other.
 */
import type { ModelRoute } from '../../core/index.js';

type Json = Record<string, unknown>;

export interface SemanticInput {
  text: string;
  /** The key body with the text replaced by `""`. */
  blanked: Json;
}

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text of a message content: a string, or the `text` of its text parts. */
function contentText(content: unknown): { text: string; blanked: unknown } | undefined {
  if (typeof content === 'string') return { text: content, blanked: '' };
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  const blanked = content.map((part: unknown) => {
    if (isRecord(part) && typeof part.text === 'string') {
      texts.push(part.text);
      return { ...part, text: '' };
    }
    return part;
  });
  return texts.length === 0 ? undefined : { text: texts.join('\n'), blanked };
}

/** The last `role: user` message of a list, its text, and the list with that text blanked. */
function lastUser(messages: unknown): { text: string; blanked: unknown[] } | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m: unknown = messages[i];
    if (!isRecord(m) || m.role !== 'user') continue;
    const c = contentText(m.content);
    if (c === undefined) return undefined;
    const blanked = messages.slice();
    blanked[i] = { ...m, content: c.blanked };
    return { text: c.text, blanked };
  }
  return undefined;
}

/** What to embed for this route and body, or undefined when the route carries no prompt text. */
export function semanticInput(route: ModelRoute, body: Json): SemanticInput | undefined {
  let found: { text: string; field: string; blanked: unknown } | undefined;
  if (route === 'chat.completions' || route === 'messages') {
    const u = lastUser(body.messages);
    if (u !== undefined) found = { text: u.text, field: 'messages', blanked: u.blanked };
  } else if (route === 'completions') {
    const p = body.prompt;
    if (typeof p === 'string') found = { text: p, field: 'prompt', blanked: '' };
    else if (Array.isArray(p) && p.length > 0 && p.every((s) => typeof s === 'string')) found = { text: p.join('\n'), field: 'prompt', blanked: '' };
  } else if (route === 'responses') {
    const input = body.input;
    if (typeof input === 'string') found = { text: input, field: 'input', blanked: '' };
    else {
      const u = lastUser(input);
      if (u !== undefined) found = { text: u.text, field: 'input', blanked: u.blanked };
    }
  }
  if (found === undefined || found.text.trim().length === 0) return undefined;
  return { text: found.text, blanked: { ...body, [found.field]: found.blanked } };
}
