/**
 * The text of requests and answers, whatever the client's dialect, and its rewriting in place.
 *
 * Checks read one string; redaction rewrites every text part on its own (so a span never crosses
 * two messages) and writes the result back where it came from, in the same dialect:
 *
 *   chat.completions   messages[].content (string, or parts of type text)
 *   completions        prompt (string or strings)
 *   embeddings         input (string or strings; token arrays are not text)
 *   responses          instructions, input (string, or items whose content is a string or input_text parts)
 *   messages           system (string or text blocks), messages[].content (string, text blocks, tool_result text)
 *
 * Answers (whole, client dialect): chat `choices[].message.content`, completions `choices[].text`,
 * messages `content[]` text blocks, responses `output[].content[]` output_text parts. Stream events
 * carry deltas in the same places (see {@link eventText}).
 */

type Json = Record<string, unknown>;

/** Routes whose requests guardrails read. */
export const INPUT_ROUTES: ReadonlySet<string> = new Set(['chat.completions', 'completions', 'embeddings', 'responses', 'messages']);
/** Routes whose answers guardrails read (embeddings answer vectors, not text). */
export const OUTPUT_ROUTES: ReadonlySet<string> = new Set(['chat.completions', 'completions', 'responses', 'messages']);

/** Rewrites one text part; returns it unchanged when there is nothing to do. */
export type TextMap = (text: string) => string;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string, or an array of parts whose text parts (`types`) are mapped. Returns the same value when unchanged. */
function mapContent(content: unknown, fn: TextMap, types: ReadonlySet<string>): unknown {
  if (typeof content === 'string') return fn(content);
  if (!Array.isArray(content)) return content;
  let out: unknown[] | undefined;
  for (let i = 0; i < content.length; i++) {
    const part = content[i];
    let next: unknown = part;
    if (isObj(part)) {
      if (typeof part.text === 'string' && types.has(String(part.type))) {
        const t = fn(part.text);
        if (t !== part.text) next = { ...part, text: t };
      } else if (part.type === 'tool_result' && part.content !== undefined) {
        const c = mapContent(part.content, fn, types);
        if (c !== part.content) next = { ...part, content: c };
      }
    }
    if (next !== part) (out ??= content.slice())[i] = next;
  }
  return out ?? content;
}

const CHAT_PARTS: ReadonlySet<string> = new Set(['text', 'input_text']);
const ANSWER_PARTS: ReadonlySet<string> = new Set(['text', 'output_text']);

function mapMessages(messages: unknown, fn: TextMap): unknown {
  if (!Array.isArray(messages)) return messages;
  let out: unknown[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m) || m.content === undefined) continue;
    const c = mapContent(m.content, fn, CHAT_PARTS);
    if (c !== m.content) (out ??= messages.slice())[i] = { ...m, content: c };
  }
  return out ?? messages;
}

function mapStrings(value: unknown, fn: TextMap): unknown {
  if (typeof value === 'string') return fn(value);
  if (!Array.isArray(value)) return value;
  let out: unknown[] | undefined;
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string') continue;
    const t = fn(value[i] as string);
    if (t !== value[i]) (out ??= value.slice())[i] = t;
  }
  return out ?? value;
}

/** Each field of `body` that `plan` maps; a new body when something changed, else the same object. */
function mapFields(body: Json, plan: Record<string, (v: unknown) => unknown>): Json {
  let out: Json | undefined;
  for (const field in plan) {
    if (body[field] === undefined) continue;
    const next = plan[field]!(body[field]);
    if (next !== body[field]) (out ??= { ...body })[field] = next;
  }
  return out ?? body;
}

/** The request body with every text part passed through `fn` (the same object when nothing changed). */
export function mapRequestText(route: string, body: Json, fn: TextMap): Json {
  switch (route) {
    case 'chat.completions':
      return mapFields(body, { messages: (v) => mapMessages(v, fn) });
    case 'completions':
      return mapFields(body, { prompt: (v) => mapStrings(v, fn) });
    case 'embeddings':
      return mapFields(body, { input: (v) => mapStrings(v, fn) });
    case 'responses':
      return mapFields(body, {
        instructions: (v) => (typeof v === 'string' ? fn(v) : v),
        input: (v) => (typeof v === 'string' ? fn(v) : mapMessages(v, fn)),
      });
    case 'messages':
      return mapFields(body, {
        system: (v) => mapContent(v, fn, CHAT_PARTS),
        messages: (v) => mapMessages(v, fn),
      });
    default:
      return body;
  }
}

/** Every text part of a request, in order. */
export function requestParts(route: string, body: Json): string[] {
  const parts: string[] = [];
  mapRequestText(route, body, (t) => {
    parts.push(t);
    return t;
  });
  return parts;
}

/** The whole answer with every text part passed through `fn` (the same object when nothing changed). */
export function mapAnswerText(route: string, answer: Json, fn: TextMap): Json {
  switch (route) {
    case 'chat.completions':
    case 'completions':
      return mapFields(answer, {
        choices: (choices) => {
          if (!Array.isArray(choices)) return choices;
          let out: unknown[] | undefined;
          for (let i = 0; i < choices.length; i++) {
            const c = choices[i];
            if (!isObj(c)) continue;
            let next: Json = c;
            if (typeof c.text === 'string') {
              const t = fn(c.text);
              if (t !== c.text) next = { ...c, text: t };
            }
            const m = c.message;
            if (isObj(m) && m.content !== undefined) {
              const content = mapContent(m.content, fn, ANSWER_PARTS);
              if (content !== m.content) next = { ...next, message: { ...m, content } };
            }
            if (next !== c) (out ??= choices.slice())[i] = next;
          }
          return out ?? choices;
        },
      });
    case 'messages':
      return mapFields(answer, { content: (v) => mapContent(v, fn, ANSWER_PARTS) });
    case 'responses':
      return mapFields(answer, {
        output: (items) => {
          if (!Array.isArray(items)) return items;
          let out: unknown[] | undefined;
          for (let i = 0; i < items.length; i++) {
            const item = items[i];
            if (!isObj(item) || item.content === undefined) continue;
            const content = mapContent(item.content, fn, ANSWER_PARTS);
            if (content !== item.content) (out ??= items.slice())[i] = { ...item, content };
          }
          return out ?? items;
        },
        output_text: (v) => (typeof v === 'string' ? fn(v) : v),
      });
    default:
      return answer;
  }
}

/** Every text part of a whole answer, in order. */
export function answerParts(route: string, answer: Json): string[] {
  const parts: string[] = [];
  mapAnswerText(route, answer, (t) => {
    parts.push(t);
    return t;
  });
  return parts;
}

/**
 * Where a stream event keeps its text. `delta`: a piece of the answer (to be scanned as the stream
 * flows); `whole`: a summary event repeating text already streamed (Responses' `*.done` and
 * `response.completed`), rewritten whole; `none`: no text (role, finish, usage, tool calls).
 */
export type EventTextKind = 'delta' | 'whole' | 'none';

/** The kind of text an event carries, for the client's route. */
export function eventTextKind(route: string, chunk: Json): EventTextKind {
  if (route === 'messages') return chunk.type === 'content_block_delta' && isObj(chunk.delta) && typeof chunk.delta.text === 'string' ? 'delta' : 'none';
  if (route === 'responses') {
    if (chunk.type === 'response.output_text.delta') return 'delta';
    switch (chunk.type) {
      case 'response.output_text.done':
      case 'response.content_part.done':
      case 'response.output_item.done':
      case 'response.completed':
      case 'response.incomplete':
        return 'whole';
      default:
        return 'none';
    }
  }
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length === 0) return 'none';
  const c = choices[0];
  if (!isObj(c)) return 'none';
  if (typeof c.text === 'string' && c.text.length > 0) return 'delta';
  return isObj(c.delta) && typeof c.delta.content === 'string' && c.delta.content.length > 0 ? 'delta' : 'none';
}

/** The delta text of a `delta` event. */
export function eventDelta(route: string, chunk: Json): string {
  if (route === 'messages') return (chunk.delta as Json).text as string;
  if (route === 'responses') return typeof chunk.delta === 'string' ? chunk.delta : '';
  const c = (chunk.choices as Json[])[0]!;
  if (typeof c.text === 'string') return c.text;
  return (c.delta as Json).content as string;
}

/** A copy of a `delta` event carrying `text` instead. */
export function withDelta(route: string, chunk: Json, text: string): Json {
  if (route === 'messages') return { ...chunk, delta: { ...(chunk.delta as Json), text } };
  if (route === 'responses') return { ...chunk, delta: text };
  const choices = (chunk.choices as Json[]).slice();
  const c = choices[0]!;
  choices[0] = typeof c.text === 'string' ? { ...c, text } : { ...c, delta: { ...(c.delta as Json), content: text } };
  return { ...chunk, choices };
}

/** A `whole` event with its text parts passed through `fn`. */
export function mapWholeEvent(chunk: Json, fn: TextMap): Json {
  switch (chunk.type) {
    case 'response.output_text.done':
      return typeof chunk.text === 'string' ? { ...chunk, text: fn(chunk.text) } : chunk;
    case 'response.content_part.done':
      return isObj(chunk.part) ? { ...chunk, part: (mapContent([chunk.part], fn, ANSWER_PARTS) as unknown[])[0] } : chunk;
    case 'response.output_item.done':
      return isObj(chunk.item) && chunk.item.content !== undefined ? { ...chunk, item: { ...chunk.item, content: mapContent(chunk.item.content, fn, ANSWER_PARTS) } } : chunk;
    default:
      return isObj(chunk.response) ? { ...chunk, response: mapAnswerText('responses', chunk.response, fn) } : chunk;
  }
}
