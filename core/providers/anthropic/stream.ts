/**
 * Anthropic Messages stream → OpenAI chat completion chunks.
 *
 *   message_start ───────────────► {delta:{role:'assistant',content:''}}
 *   content_block_start(tool_use) ► {delta:{tool_calls:[{index,id,type,function:{name,arguments:''}}]}}
 *   content_block_delta
 *     text_delta ────────────────► {delta:{content}}
 *     input_json_delta ──────────► {delta:{tool_calls:[{index,function:{arguments}}]}}
 *     thinking_delta ────────────► {delta:{reasoning_content}}        (non-strict only)
 *   message_delta ───────────────► {delta:{}, finish_reason}
 *   message_stop ────────────────► {choices:[], usage} (include_usage only), then [DONE]
 *   error ───────────────────────► event: error {error:{…}}            (no [DONE] after it)
 *   ping, content_block_stop, signature/citation deltas, unknown events: nothing
 *
 * The answer tool of a `response_format` call (json-output.ts) is not a tool call: its
 * input_json_delta fragments are the content, and a turn that ends on it alone ends with `stop`.
 *
 * OpenAI numbers tool calls 0, 1, 2…; Anthropic numbers every content block, text included, so
 * block indexes are mapped to tool-call indexes as tool_use blocks open.
 */
import type { SseEvent } from '../../sse/sse-parser.js';
import { chatChunk } from '../openai-shape.js';
import type { StreamTranslator, TranslateContext } from '../types.js';
import { openaiError } from './errors.js';
import { finishReason } from './finish-reasons.js';
import { answerFinish, unixNow } from './response.js';
import { answerTool } from './json-output.js';
import { openaiUsage } from './usage.js';
import { EMPTY_USAGE, isRecord, mergeUsage, stringField, type AnthropicUsage, type Json } from './wire.js';

const DONE: SseEvent = Object.freeze({ data: '[DONE]' });

/** One translator per streamed answer. `now` is injectable so golden tests can compare chunks. */
export function createStreamTranslator(ctx: TranslateContext, now = unixNow()): StreamTranslator {
  const options = ctx.request.stream_options;
  const includeUsage = isRecord(options) && options.include_usage === true;
  let id = '';
  let model = typeof ctx.request.model === 'string' ? ctx.request.model : '';
  let usage: AnthropicUsage = EMPTY_USAGE;
  /** Anthropic content-block index → OpenAI tool-call index. */
  const toolIndex = new Map<number, number>();
  const answerName = answerTool(ctx.request)?.name;
  /** Content-block indexes of the answer tool: their JSON is the message text. */
  const answerBlocks = new Set<number>();
  /** Set by message_stop or an error: nothing more to send, `end()` adds nothing. */
  let finished = false;

  function chunk(delta: Json, finish: string | null = null): SseEvent {
    return chatChunk({ id, created: now, model, includeUsage }, delta, finish);
  }

  function fail(error: unknown): SseEvent[] {
    finished = true;
    return [{ event: 'error', data: JSON.stringify(openaiError(500, { error })) }];
  }

  function blockStart(data: Json): SseEvent[] {
    const block = data.content_block;
    if (!isRecord(block) || block.type !== 'tool_use' || typeof data.index !== 'number') return [];
    if (answerName !== undefined && block.name === answerName) {
      answerBlocks.add(data.index);
      return [];
    }
    const index = toolIndex.size;
    toolIndex.set(data.index, index);
    const call = { index, id: stringField(block, 'id') ?? '', type: 'function', function: { name: stringField(block, 'name') ?? '', arguments: '' } };
    return [chunk({ tool_calls: [call] })];
  }

  function blockDelta(data: Json): SseEvent[] {
    const delta = data.delta;
    if (!isRecord(delta)) return [];
    switch (delta.type) {
      case 'text_delta':
        return typeof delta.text === 'string' ? [chunk({ content: delta.text })] : [];
      case 'input_json_delta': {
        if (typeof data.index === 'number' && answerBlocks.has(data.index)) {
          return typeof delta.partial_json === 'string' && delta.partial_json.length > 0 ? [chunk({ content: delta.partial_json })] : [];
        }
        const index = typeof data.index === 'number' ? toolIndex.get(data.index) : undefined;
        // Anthropic often opens with an empty fragment; it adds nothing to the arguments.
        if (index === undefined || typeof delta.partial_json !== 'string' || delta.partial_json.length === 0) return [];
        return [chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
      }
      case 'thinking_delta':
        return !ctx.strict && typeof delta.thinking === 'string' ? [chunk({ reasoning_content: delta.thinking })] : [];
      default:
        return [];
    }
  }

  function translate(data: Json): SseEvent[] {
    switch (data.type) {
      case 'message_start': {
        const message = isRecord(data.message) ? data.message : {};
        id = stringField(message, 'id') ?? id;
        model = stringField(message, 'model') ?? model;
        usage = mergeUsage(usage, message.usage);
        return [chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start':
        return blockStart(data);
      case 'content_block_delta':
        return blockDelta(data);
      case 'message_delta': {
        // Usage here is cumulative: output_tokens always, input and cache counts on newer API versions.
        usage = mergeUsage(usage, data.usage);
        const delta = isRecord(data.delta) ? data.delta : {};
        return [chunk({}, answerFinish(finishReason(delta.stop_reason), toolIndex.size, answerBlocks.size > 0))];
      }
      case 'message_stop': {
        finished = true;
        if (!includeUsage) return [DONE];
        const last = { id, object: 'chat.completion.chunk', created: now, model, choices: [], usage: openaiUsage(usage) };
        return [{ data: JSON.stringify(last) }, DONE];
      }
      case 'error':
        return fail(data.error);
      default:
        // ping, content_block_stop, and event types Anthropic may add later.
        return [];
    }
  }

  return {
    event(event: SseEvent): SseEvent[] {
      if (finished || event.data.length === 0) return [];
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        return fail({ type: 'api_error', message: 'Anthropic sent a stream event that is not JSON' });
      }
      return isRecord(data) ? translate(data) : [];
    },
    end(): SseEvent[] {
      if (finished) return [];
      finished = true;
      return [DONE];
    },
  };
}
