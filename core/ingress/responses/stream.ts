/**
 * OpenAI chat completion chunks → Responses stream events, in the order the SDKs accumulate them.
 *
 *   first chunk ──────────────► response.created, response.in_progress (status in_progress, output [])
 *   delta.content ────────────► (message item not open?) response.output_item.added {message},
 *                               response.content_part.added {output_text}; then
 *                               response.output_text.delta
 *   delta.refusal ────────────► a refusal part in the message item: response.refusal.delta
 *   delta.tool_calls[i] (new) ► response.output_item.added {function_call, arguments ''}
 *              .arguments ────► response.function_call_arguments.delta
 *   finish_reason, usage ─────► remembered
 *   [DONE] (or the end after a finish_reason) ► every open item closed in output order
 *                               (output_text.done, content_part.done, output_item.done;
 *                               function_call_arguments.done, output_item.done), then
 *                               response.completed, or response.incomplete for a cut answer,
 *                               with the whole response and its usage
 *   event: error / cut stream ► an `error` event (see errors.ts), then nothing
 *
 * Every event carries `sequence_number` (0, 1, 2, …) and SSE `event:` equal to its `type`, as
 * OpenAI sends them. Unlike Anthropic's blocks, Responses items are addressed by `output_index`,
 * so a server that interleaves arguments of several tool calls is expressible as it is.
 */
import type { StreamTranslator } from '../../providers/types.js';
import { isRecord, stringField } from '../../providers/openai-shape.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { readChatEvent } from '../chat-events.js';
import { streamErrorData } from './errors.js';
import { randomId } from './ids.js';
import { functionCallItem, messageItem, outcome, responseShell, seconds, textPart, type Status } from './response.js';
import { responsesUsage } from './usage.js';
import type { Json, ResponsesOptions } from './wire.js';

interface OpenMessage {
  kind: 'message';
  index: number;
  id: string;
  /** Parts in order; the last one is the one deltas go to. */
  parts: Array<{ type: 'output_text' | 'refusal'; text: string }>;
}

interface OpenCall {
  kind: 'call';
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
}

/**
 * One translator per streamed answer. `request` is the client's Responses body.
 *
 * @example
 *   const t = createStreamTranslator({ model: 'm', input: 'Hi', stream: true }, { strict: true });
 *   t.event({ data: '{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Hi"}}]}' });
 *   // response.created, response.in_progress, response.output_item.added, response.content_part.added, response.output_text.delta
 */
export function createStreamTranslator(request: Json, options: ResponsesOptions): StreamTranslator {
  const newId = options.newId ?? randomId;
  const id = newId('resp');
  const created = seconds(options);
  let sequence = 0;
  let started = false;
  let finished = false;
  let model: unknown;
  let finishReason: unknown;
  let usage: unknown;
  const items: Array<OpenMessage | OpenCall> = [];
  /** The message item text goes to; a tool call in between closes it for text (a new one opens). */
  let message: OpenMessage | undefined;
  const calls = new Map<number, OpenCall>();

  function out(type: string, fields: Json): SseEvent {
    return { event: type, data: JSON.stringify({ type, sequence_number: sequence++, ...fields }) };
  }

  function shell(status: Status): Json {
    return responseShell(request, { id, created, model, status });
  }

  function start(data: Json, events: SseEvent[]): void {
    if (started) return;
    started = true;
    if (typeof data.model === 'string') model = data.model;
    const response = shell('in_progress');
    events.push(out('response.created', { response }), out('response.in_progress', { response }));
  }

  function openMessage(events: SseEvent[]): OpenMessage {
    if (message !== undefined) return message;
    message = { kind: 'message', index: items.length, id: newId('msg'), parts: [] };
    items.push(message);
    events.push(out('response.output_item.added', { output_index: message.index, item: messageItem(message.id, [], 'in_progress') }));
    return message;
  }

  function append(type: 'output_text' | 'refusal', delta: string, events: SseEvent[]): void {
    const item = openMessage(events);
    let part = item.parts.at(-1);
    if (part?.type !== type) {
      part = { type, text: '' };
      item.parts.push(part);
      const added = type === 'output_text' ? textPart('') : { type: 'refusal', refusal: '' };
      events.push(out('response.content_part.added', { item_id: item.id, output_index: item.index, content_index: item.parts.length - 1, part: added }));
    }
    part.text += delta;
    const where = { item_id: item.id, output_index: item.index, content_index: item.parts.length - 1 };
    if (type === 'output_text') events.push(out('response.output_text.delta', { ...where, delta, logprobs: [] }));
    else events.push(out('response.refusal.delta', { ...where, delta }));
  }

  function toolDelta(raw: unknown, position: number, events: SseEvent[]): void {
    if (!isRecord(raw)) return;
    const key = typeof raw.index === 'number' ? raw.index : position;
    const fn = isRecord(raw.function) ? raw.function : {};
    const callId = stringField(raw, 'id');
    let call = calls.get(key);
    // Some servers repeat the id on every fragment; only a new index or a new id starts a call.
    if (call === undefined || (callId !== undefined && callId.length > 0 && callId !== call.callId)) {
      call = { kind: 'call', index: items.length, id: newId('fc'), callId: callId || newId('call'), name: stringField(fn, 'name') ?? '', args: '' };
      items.push(call);
      calls.set(key, call);
      message = undefined; // text after a tool call is a new message item
      events.push(out('response.output_item.added', { output_index: call.index, item: functionCallItem({ id: call.id, callId: call.callId, name: call.name, args: '', status: 'in_progress' }) }));
    }
    const args = stringField(fn, 'arguments');
    if (args === undefined || args.length === 0) return;
    call.args += args;
    events.push(out('response.function_call_arguments.delta', { item_id: call.id, output_index: call.index, delta: args }));
  }

  /** The finished item as it appears in `output`. */
  function done(item: OpenMessage | OpenCall, status: Status): Json {
    if (item.kind === 'call') return functionCallItem({ id: item.id, callId: item.callId, name: item.name, args: item.args, status: 'completed' });
    return messageItem(item.id, item.parts.map((p) => (p.type === 'output_text' ? textPart(p.text) : { type: 'refusal', refusal: p.text })), status);
  }

  function finish(events: SseEvent[]): SseEvent[] {
    start({}, events);
    finished = true;
    const { status, incomplete } = outcome(finishReason);
    const output: Json[] = [];
    for (const item of items) {
      const final = done(item, status);
      if (item.kind === 'call') {
        events.push(out('response.function_call_arguments.done', { item_id: item.id, output_index: item.index, arguments: item.args }));
      } else {
        item.parts.forEach((part, j) => {
          const where = { item_id: item.id, output_index: item.index, content_index: j };
          if (part.type === 'output_text') events.push(out('response.output_text.done', { ...where, text: part.text, logprobs: [] }));
          else events.push(out('response.refusal.done', { ...where, refusal: part.text }));
          events.push(out('response.content_part.done', { ...where, part: (final.content as Json[])[j] }));
        });
      }
      events.push(out('response.output_item.done', { output_index: item.index, item: final }));
      output.push(final);
    }
    const response = shell(status);
    response.incomplete_details = incomplete;
    response.output = output;
    response.usage = responsesUsage(usage);
    options.onAnswer?.(response);
    events.push(out(status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
    return events;
  }

  function fail(body: unknown, events: SseEvent[] = []): SseEvent[] {
    finished = true;
    events.push({ event: 'error', data: JSON.stringify(streamErrorData(body, sequence++)) });
    return events;
  }

  function chunk(data: Json): SseEvent[] {
    const events: SseEvent[] = [];
    start(data, events);
    if (isRecord(data.usage)) usage = data.usage;
    const choice = Array.isArray(data.choices) ? data.choices[0] : undefined;
    if (!isRecord(choice)) return events;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    const text = stringField(delta, 'content');
    if (text !== undefined && text.length > 0) append('output_text', text, events);
    const refusal = stringField(delta, 'refusal');
    if (refusal !== undefined && refusal.length > 0) append('refusal', refusal, events);
    const toolCalls = Array.isArray(delta.tool_calls) ? delta.tool_calls : [];
    toolCalls.forEach((call, i) => toolDelta(call, i, events));
    if (typeof choice.finish_reason === 'string' && choice.finish_reason.length > 0) finishReason = choice.finish_reason;
    return events;
  }

  return {
    event(event: SseEvent): SseEvent[] {
      if (finished) return [];
      const read = readChatEvent(event);
      switch (read.kind) {
        case 'error':
          return fail(read.body);
        case 'done':
          return finish([]);
        case 'not_json':
          return fail({ error: { message: 'The upstream sent a stream event that is not JSON.', type: 'server_error' } });
        case 'chunk':
          return chunk(read.data);
        default:
          return [];
      }
    },
    end(): SseEvent[] {
      if (finished) return [];
      if (finishReason !== undefined) return finish([]);
      return fail({ error: { message: 'The upstream stream ended before the answer was complete.', type: 'server_error' } });
    },
  };
}
