/**
 * ConverseStream → OpenAI chat completion chunks.
 *
 * The core decodes AWS's binary event stream and hands over one event per message: `event` is the
 * `:event-type` header (`exception` for a modelled exception), `data` the JSON payload.
 *
 *   messageStart ──────────────────► {delta:{role:'assistant',content:''}}
 *   contentBlockStart(toolUse) ────► {delta:{tool_calls:[{index,id,type,function:{name,arguments:''}}]}}
 *   contentBlockDelta
 *     text ────────────────────────► {delta:{content}}
 *     toolUse.input ───────────────► {delta:{tool_calls:[{index,function:{arguments}}]}}
 *     reasoningContent.text ───────► {delta:{reasoning_content}}        (non-strict only)
 *   messageStop ───────────────────► {delta:{}, finish_reason}
 *   metadata ──────────────────────► {choices:[], usage} (include_usage only), then [DONE]
 *   exception ─────────────────────► event: error {error:{…}}          (no [DONE] after it)
 *   contentBlockStop, reasoning signatures, unknown events: nothing
 *
 * The answer tool of a `response_format` call is not a tool call: its input fragments are the
 * content, and a turn that ends on it alone ends with `stop`.
 *
 * OpenAI numbers tool calls 0, 1, 2…; Converse numbers every content block, text included, so
 * block indexes are mapped to tool-call indexes as toolUse blocks open. `metadata` (usage) comes
 * after `messageStop`, so [DONE] waits for it; a stream that ends without it gets [DONE] from
 * `end()`. The answer has no id: one is made per stream and shared by every chunk.
 */
import { Errors } from '../../errors.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { chatChunk } from '../openai-shape.js';
import type { StreamTranslator, TranslateContext } from '../types.js';
import { exceptionError } from './errors.js';
import { finishReason } from './finish-reasons.js';
import { completionId, unixNow } from './response.js';
import { answerTool } from '../anthropic/json-output.js';
import { answerFinish } from '../anthropic/response.js';
import { openaiUsage } from './usage.js';
import { isRecord, stringField, StreamEvents, type Json } from './wire.js';

const DONE: SseEvent = Object.freeze({ data: '[DONE]' });

/**
 * One translator per streamed answer. `now` is injectable so golden tests can compare chunks.
 *
 * @example
 *   const s = createStreamTranslator(ctx);
 *   s.event({ event: 'contentBlockDelta', data: '{"delta":{"text":"Hi"},"contentBlockIndex":0}' });
 */
export function createStreamTranslator(ctx: TranslateContext, now = unixNow()): StreamTranslator {
  const options = ctx.request.stream_options;
  const includeUsage = isRecord(options) && options.include_usage === true;
  const id = completionId();
  const model = typeof ctx.request.model === 'string' ? ctx.request.model : '';
  /** Converse content-block index → OpenAI tool-call index. */
  const toolIndex = new Map<number, number>();
  const answerName = answerTool(ctx.request)?.name;
  /** Content-block indexes of the answer tool: their JSON is the message text. */
  const answerBlocks = new Set<number>();
  /** The role chunk went out (normally on messageStart; before any other chunk regardless). */
  let started = false;
  /** Set by metadata or an error: nothing more to send, `end()` adds nothing. */
  let finished = false;

  function chunk(delta: Json, finish: string | null = null): SseEvent {
    return chatChunk({ id, created: now, model, includeUsage }, delta, finish);
  }

  /** Prefixes the role chunk to the first chunks of a stream that skipped messageStart. */
  function withRole(out: SseEvent[]): SseEvent[] {
    if (started || out.length === 0) return out;
    started = true;
    return [chunk({ role: 'assistant', content: '' }), ...out];
  }

  function fail(body: unknown): SseEvent[] {
    finished = true;
    return [{ event: 'error', data: JSON.stringify(body) }];
  }

  function blockStart(data: Json): SseEvent[] {
    const start = isRecord(data.start) ? data.start : {};
    const use = start.toolUse;
    if (!isRecord(use) || typeof data.contentBlockIndex !== 'number') return [];
    if (answerName !== undefined && use.name === answerName) {
      answerBlocks.add(data.contentBlockIndex);
      return [];
    }
    const index = toolIndex.size;
    toolIndex.set(data.contentBlockIndex, index);
    const name = stringField(use, 'name') ?? '';
    const call = { index, id: stringField(use, 'toolUseId') ?? '', type: 'function', function: { name, arguments: '' } };
    return [chunk({ tool_calls: [call] })];
  }

  function blockDelta(data: Json): SseEvent[] {
    const delta = isRecord(data.delta) ? data.delta : {};
    if (typeof delta.text === 'string') return delta.text.length > 0 ? [chunk({ content: delta.text })] : [];
    if (isRecord(delta.toolUse) && typeof data.contentBlockIndex === 'number' && answerBlocks.has(data.contentBlockIndex)) {
      const fragment = delta.toolUse.input;
      return typeof fragment === 'string' && fragment.length > 0 ? [chunk({ content: fragment })] : [];
    }
    if (isRecord(delta.toolUse)) {
      const index = typeof data.contentBlockIndex === 'number' ? toolIndex.get(data.contentBlockIndex) : undefined;
      const fragment = delta.toolUse.input;
      if (index === undefined || typeof fragment !== 'string' || fragment.length === 0) return [];
      return [chunk({ tool_calls: [{ index, function: { arguments: fragment } }] })];
    }
    if (isRecord(delta.reasoningContent)) {
      // `signature` and `redactedContent` deltas carry nothing readable.
      const text = delta.reasoningContent.text;
      return !ctx.strict && typeof text === 'string' && text.length > 0 ? [chunk({ reasoning_content: text })] : [];
    }
    return [];
  }

  function translate(type: string | undefined, data: Json): SseEvent[] {
    switch (type) {
      case StreamEvents.messageStart:
        if (started) return [];
        started = true;
        return [chunk({ role: 'assistant', content: '' })];
      case StreamEvents.contentBlockStart:
        return withRole(blockStart(data));
      case StreamEvents.contentBlockDelta:
        return withRole(blockDelta(data));
      case StreamEvents.messageStop:
        return withRole([chunk({}, answerFinish(finishReason(data.stopReason), toolIndex.size, answerBlocks.size > 0))]);
      case StreamEvents.metadata: {
        finished = true;
        if (!includeUsage) return [DONE];
        const last = { id, object: 'chat.completion.chunk', created: now, model, choices: [], usage: openaiUsage(data.usage) };
        return [{ data: JSON.stringify(last) }, DONE];
      }
      default:
        // contentBlockStop, and event types AWS may add later.
        return [];
    }
  }

  return {
    event(event: SseEvent): SseEvent[] {
      if (finished) return [];
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        return fail(Errors.upstreamInvalidResponse(`Bedrock sent a ${event.event ?? 'stream'} event whose payload is not JSON.`));
      }
      if (event.event === StreamEvents.exception) return fail(exceptionError(data));
      return isRecord(data) ? translate(event.event, data) : [];
    },
    end(): SseEvent[] {
      if (finished) return [];
      finished = true;
      return [DONE];
    },
  };
}
