/**
 * OpenAI chat completion chunks → Anthropic Messages stream events.
 *
 *   first chunk ─────────────────► message_start (content [], usage zero: OpenAI reports it last)
 *   delta.reasoning_content ─────► thinking block: content_block_start, thinking_delta…  (non-strict)
 *   delta.content / .refusal ────► text block: content_block_start, text_delta…
 *   delta.tool_calls[i] (new) ───► content_block_start {type:'tool_use', id, name, input:{}}
 *   delta.tool_calls[i].arguments ► input_json_delta {partial_json}
 *   finish_reason ───────────────► closes the open block, remembered as stop_reason
 *   usage (any chunk that has it) ► remembered; the last one wins
 *   [DONE] ──────────────────────► message_delta {stop_reason, usage (cumulative)}, message_stop
 *   event: error, data {error} ──► event: error {type:'error', error:{type, message}}, then nothing
 *   comments (pings) ────────────► nothing
 *
 * Anthropic content blocks are strictly sequential: one is open at a time and each index is
 * started once and stopped once. Text, thinking and tool calls share one 0, 1, 2… sequence, so
 * switching kind closes the open block; OpenAI's tool-call `index` is mapped onto that sequence.
 * OpenAI servers stream one tool call after another; a server that goes back to add arguments to
 * a tool call whose block is already closed cannot be expressed, and the stream fails visibly
 * rather than dropping those arguments.
 *
 * A stream that ends without `[DONE]` is complete when a `finish_reason` came (some compatible
 * servers never send `[DONE]`); without one the answer was cut short, and it ends with an error
 * event instead of a `message_stop` that would claim success.
 */
import type { StreamTranslator } from '../../providers/types.js';
import { isRecord, stringField } from '../../providers/openai-shape.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { readChatEvent } from '../chat-events.js';
import { anthropicStreamError } from './errors.js';
import { messageId, randomId } from './ids.js';
import { stopReason } from './stop-reasons.js';
import { anthropicUsage, EMPTY_USAGE } from './usage.js';
import type { AnthropicErrorBody, AnthropicUsage, IngressOptions, Json } from './wire.js';

type BlockKind = 'text' | 'thinking' | 'tool_use';

/** One Anthropic event: the SSE `event:` name repeats the data's `type`, as Anthropic sends it. */
function out(type: string, fields: Json = {}): SseEvent {
  return { event: type, data: JSON.stringify({ type, ...fields }) };
}

function errorEvent(body: AnthropicErrorBody): SseEvent {
  return { event: 'error', data: JSON.stringify(body) };
}

/**
 * One translator per streamed answer. `request` is the client's Anthropic body.
 *
 * @example
 *   const t = createStreamTranslator({ model: 'gpt-4o', stream: true }, { strict: true });
 *   t.event({ data: '{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Hi"}}]}' });
 *   // message_start, content_block_start (text), content_block_delta (text_delta "Hi")
 */
export function createStreamTranslator(request: Json, options: IngressOptions): StreamTranslator {
  const newId = options.newId ?? randomId;
  let started = false;
  /** Set by [DONE], an error or end(): nothing more goes out. */
  let finished = false;
  let nextIndex = 0;
  let open: { index: number; kind: BlockKind } | undefined;
  /** OpenAI tool-call index → its block index and call id. */
  const tools = new Map<number, { index: number; id: string }>();
  let finishReason: string | undefined;
  let toolUse = false;
  let refused = false;
  let usage: AnthropicUsage = EMPTY_USAGE;

  function start(chunk: Json, events: SseEvent[]): void {
    if (started) return;
    started = true;
    const model = stringField(chunk, 'model') ?? (typeof request.model === 'string' ? request.model : '');
    const message = {
      id: messageId(chunk.id, newId),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    events.push(out('message_start', { message }));
  }

  function close(events: SseEvent[]): void {
    if (open === undefined) return;
    events.push(out('content_block_stop', { index: open.index }));
    open = undefined;
  }

  function openBlock(kind: BlockKind, block: Json, events: SseEvent[]): number {
    close(events);
    const index = nextIndex++;
    open = { index, kind };
    events.push(out('content_block_start', { index, content_block: block }));
    return index;
  }

  /** Appends text or thinking to the open block of that kind, opening one if needed. */
  function appendText(kind: 'text' | 'thinking', text: string, events: SseEvent[]): void {
    let index = open?.kind === kind ? open.index : undefined;
    if (kind === 'text') {
      index ??= openBlock(kind, { type: 'text', text: '' }, events);
      events.push(out('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    } else {
      // Only Anthropic can sign reasoning; the empty signature matches the non-stream answer.
      index ??= openBlock(kind, { type: 'thinking', thinking: '', signature: '' }, events);
      events.push(out('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: text } }));
    }
  }

  /** False when the call cannot be expressed (arguments for a tool block already closed). */
  function toolDelta(call: unknown, position: number, events: SseEvent[]): boolean {
    if (!isRecord(call)) return true;
    const key = typeof call.index === 'number' ? call.index : position;
    const fn = isRecord(call.function) ? call.function : {};
    const id = stringField(call, 'id');
    let known = tools.get(key);
    // Some servers repeat the id on every fragment; only a new index or a new id starts a call.
    if (known === undefined || (id !== undefined && id.length > 0 && id !== known.id)) {
      const callId = id || newId('toolu');
      const index = openBlock('tool_use', { type: 'tool_use', id: callId, name: stringField(fn, 'name') ?? '', input: {} }, events);
      known = { index, id: callId };
      tools.set(key, known);
      toolUse = true;
    }
    const args = stringField(fn, 'arguments');
    if (args === undefined || args.length === 0) return true;
    if (open?.index !== known.index) return false;
    events.push(out('content_block_delta', { index: known.index, delta: { type: 'input_json_delta', partial_json: args } }));
    return true;
  }

  function fail(events: SseEvent[], body: AnthropicErrorBody): SseEvent[] {
    finished = true;
    events.push(errorEvent(body));
    return events;
  }

  function finish(events: SseEvent[]): SseEvent[] {
    start({}, events);
    close(events);
    const delta = { stop_reason: stopReason({ finishReason, toolUse, refusal: refused }), stop_sequence: null };
    events.push(out('message_delta', { delta, usage: { ...usage } }), out('message_stop'));
    finished = true;
    return events;
  }

  function chunk(data: Json): SseEvent[] {
    const events: SseEvent[] = [];
    start(data, events);
    if (isRecord(data.usage)) usage = anthropicUsage(data.usage);
    const choice = Array.isArray(data.choices) ? data.choices[0] : undefined;
    if (!isRecord(choice)) return events;
    const delta = isRecord(choice.delta) ? choice.delta : {};

    const reasoning = stringField(delta, 'reasoning_content');
    if (!options.strict && reasoning !== undefined && reasoning.length > 0) appendText('thinking', reasoning, events);
    const text = stringField(delta, 'content');
    if (text !== undefined && text.length > 0) appendText('text', text, events);
    const refusal = stringField(delta, 'refusal');
    if (refusal !== undefined && refusal.length > 0) {
      refused = true;
      appendText('text', refusal, events);
    }
    const calls = Array.isArray(delta.tool_calls) ? delta.tool_calls : [];
    for (let i = 0; i < calls.length; i++) {
      if (!toolDelta(calls[i], i, events)) {
        return fail(events, {
          type: 'error',
          error: { type: 'api_error', message: 'The upstream interleaved tool call arguments, which an Anthropic stream cannot express.' },
        });
      }
    }

    if (typeof choice.finish_reason === 'string' && choice.finish_reason.length > 0) {
      finishReason = choice.finish_reason;
      close(events);
    }
    return events;
  }

  return {
    event(event: SseEvent): SseEvent[] {
      if (finished) return [];
      const read = readChatEvent(event);
      switch (read.kind) {
        case 'error':
          return fail([], anthropicStreamError(read.body));
        case 'done':
          return finish([]);
        case 'not_json':
          return fail([], { type: 'error', error: { type: 'api_error', message: 'The upstream sent a stream event that is not JSON.' } });
        case 'chunk':
          return chunk(read.data);
        default:
          return [];
      }
    },
    end(): SseEvent[] {
      if (finished) return [];
      if (finishReason !== undefined) return finish([]);
      return fail([], { type: 'error', error: { type: 'api_error', message: 'The upstream stream ended before the answer was complete.' } });
    },
  };
}
