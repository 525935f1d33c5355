/**
 * Gemini `streamGenerateContent?alt=sse` → OpenAI chat completion chunks.
 *
 * Every SSE `data:` event is a whole `GenerateContentResponse` holding the next slice of each
 * candidate; there is no end event, the stream just closes.
 *
 *   first slice of a candidate ─► {delta:{role:'assistant',content:''}}
 *   text part ─────────────────► {delta:{content}} (with `logprobs` when asked for)
 *   thought part ──────────────► {delta:{reasoning_content}}          (non-strict only)
 *   functionCall part ─────────► {delta:{tool_calls:[{index,id,type,function:{name,arguments}}]}}
 *   finishReason ──────────────► {delta:{}, finish_reason}
 *   end of stream ─────────────► {choices:[], usage} (include_usage only), then [DONE]
 *   {error:{…}} ───────────────► event: error {error:{…}}             (no [DONE] after it)
 *
 * Gemini sends function calls whole, never in fragments, so each is one complete delta.
 * `usageMetadata` is cumulative on every slice; the last one seen is the answer's usage.
 */
import type { SseEvent } from '../../sse/sse-parser.js';
import { chatChunk } from '../openai-shape.js';
import type { StreamTranslator, TranslateContext } from '../types.js';
import { openaiError } from './errors.js';
import { finishReason } from './finish-reasons.js';
import { candidateIndex, candidateParts, choiceLogprobs, toolCall, unixNow } from './response.js';
import { openaiUsage } from './usage.js';
import { isRecord, stringField, type Json } from './wire.js';

const DONE: SseEvent = Object.freeze({ data: '[DONE]' });

/** Per choice: whether the role chunk went out, and how many tool calls it has had. */
interface ChoiceState {
  toolCalls: number;
}

/** One translator per streamed answer. `now` is injectable so golden tests can compare chunks. */
export function createStreamTranslator(ctx: TranslateContext, now = unixNow()): StreamTranslator {
  const options = ctx.request.stream_options;
  const includeUsage = isRecord(options) && options.include_usage === true;
  let id = '';
  let model = typeof ctx.request.model === 'string' ? ctx.request.model : '';
  let usage: unknown;
  const choices = new Map<number, ChoiceState>();
  /** Tool calls across all choices, for unique `call_<n>` ids. */
  let calls = 0;
  /** Set by an error: nothing more to send, `end()` adds nothing. */
  let finished = false;

  function chunk(index: number, delta: Json, finish: string | null = null): SseEvent {
    return chatChunk({ id, created: now, model, includeUsage }, delta, finish, index);
  }

  function fail(error: unknown): SseEvent[] {
    finished = true;
    return [{ event: 'error', data: JSON.stringify(openaiError(500, { error })) }];
  }

  function candidate(raw: Json, position: number): SseEvent[] {
    const index = candidateIndex(raw, position);
    const out: SseEvent[] = [];
    let state = choices.get(index);
    if (state === undefined) {
      state = { toolCalls: 0 };
      choices.set(index, state);
      out.push(chunk(index, { role: 'assistant', content: '' }));
    }
    const parts = candidateParts(raw);
    if (!ctx.strict && parts.thoughts.length > 0) out.push(chunk(index, { reasoning_content: parts.thoughts.join('') }));
    if (parts.text.length > 0) out.push(withLogprobs(chunk(index, { content: parts.text.join('') }), raw));
    if (parts.calls.length > 0) {
      const deltas = parts.calls.map((call) => ({ index: state.toolCalls++, ...toolCall(call, calls++) }));
      out.push(chunk(index, { tool_calls: deltas }));
    }
    if (typeof raw.finishReason === 'string' && raw.finishReason !== 'FINISH_REASON_UNSPECIFIED') {
      out.push(chunk(index, {}, finishReason(raw.finishReason, state.toolCalls > 0)));
    }
    return out;
  }

  /** A content chunk carries the slice's log probabilities, when they were asked for. */
  function withLogprobs(event: SseEvent, raw: Json): SseEvent {
    const logprobs = ctx.request.logprobs === true ? choiceLogprobs(raw) : null;
    if (logprobs === null) return event;
    const body = JSON.parse(event.data) as { choices: Json[] };
    body.choices[0]!.logprobs = logprobs;
    return { data: JSON.stringify(body) };
  }

  function translate(data: Json): SseEvent[] {
    if (isRecord(data.error)) return fail(data.error);
    id = stringField(data, 'responseId') ?? id;
    model = stringField(data, 'modelVersion') ?? model;
    if (isRecord(data.usageMetadata)) usage = data.usageMetadata;
    const candidates = Array.isArray(data.candidates) ? data.candidates : [];
    return candidates.flatMap((c, position) => (isRecord(c) ? candidate(c, position) : []));
  }

  return {
    event(event: SseEvent): SseEvent[] {
      if (finished || event.data.length === 0) return [];
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        return fail({ status: 'INTERNAL', message: 'Gemini sent a stream event that is not JSON' });
      }
      return isRecord(data) ? translate(data) : [];
    },
    end(): SseEvent[] {
      if (finished) return [];
      finished = true;
      if (!includeUsage) return [DONE];
      const last = { id, object: 'chat.completion.chunk', created: now, model, choices: [], usage: openaiUsage(usage) };
      return [{ data: JSON.stringify(last) }, DONE];
    },
  };
}
