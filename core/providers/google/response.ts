/**
 * Gemini `GenerateContentResponse` → OpenAI `chat.completion`.
 *
 * Each candidate is a choice. Text parts join into `message.content`; `functionCall` parts become
 * `tool_calls` with ids `call_<n>` (Gemini has no call ids) and their `args` re-serialised as the
 * JSON string OpenAI clients parse. Thought parts (`thought: true`) are Gemini extras: dropped in
 * strict mode, otherwise surfaced as `reasoning_content`.
 */
import type { TranslateContext } from '../types.js';
import { finishReason } from './finish-reasons.js';
import { openaiUsage } from './usage.js';
import { isRecord, stringField, type Json } from './wire.js';

import { unixNow } from '../openai-shape.js';
export { unixNow };

/** What one candidate (or one streamed slice of it) says. */
export interface CandidateParts {
  text: string[];
  thoughts: string[];
  calls: { name: string; args: unknown }[];
}

export function candidateParts(candidate: Json): CandidateParts {
  const out: CandidateParts = { text: [], thoughts: [], calls: [] };
  const content = isRecord(candidate.content) ? candidate.content : {};
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    if (!isRecord(part)) continue;
    if (typeof part.text === 'string') (part.thought === true ? out.thoughts : out.text).push(part.text);
    else if (isRecord(part.functionCall)) {
      out.calls.push({ name: stringField(part.functionCall, 'name') ?? '', args: part.functionCall.args ?? {} });
    }
  }
  return out;
}

/** An OpenAI tool call; `n` numbers calls across the whole answer so ids stay unique. */
export function toolCall(call: CandidateParts['calls'][number], n: number): Json {
  return { id: `call_${n}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } };
}

/**
 * Gemini's `logprobsResult` (asked for with `logprobs`) → OpenAI's `logprobs` of a choice; null
 * without one.
 */
export function choiceLogprobs(candidate: Json): Json | null {
  const result = candidate.logprobsResult;
  if (!isRecord(result) || !Array.isArray(result.chosenCandidates)) return null;
  const tops = Array.isArray(result.topCandidates) ? result.topCandidates : [];
  const content = result.chosenCandidates.filter(isRecord).map((chosen, i) => {
    const top = tops[i];
    const alternatives = isRecord(top) && Array.isArray(top.candidates) ? top.candidates.filter(isRecord) : [];
    return { ...tokenLogprob(chosen), top_logprobs: alternatives.map(tokenLogprob) };
  });
  return { content, refusal: null };
}

function tokenLogprob(entry: Json): { token: string; logprob: number; bytes: number[] } {
  const token = stringField(entry, 'token') ?? '';
  const logprob = typeof entry.logProbability === 'number' ? entry.logProbability : 0;
  return { token, logprob, bytes: [...Buffer.from(token, 'utf8')] };
}

/** The choice index of a candidate (Gemini omits `index` when it is 0). */
export function candidateIndex(candidate: Json, position: number): number {
  return typeof candidate.index === 'number' ? candidate.index : position;
}

/** `now` is injectable so golden tests can compare whole bodies. */
export function buildResponse(ctx: TranslateContext, body: unknown, now = unixNow()): Json {
  const answer = isRecord(body) ? body : {};
  const candidates = Array.isArray(answer.candidates) ? answer.candidates.filter(isRecord) : [];
  let calls = 0;
  const choices = candidates.map((candidate, position) => {
    const parts = candidateParts(candidate);
    const message: Json = { role: 'assistant', content: parts.text.length > 0 ? parts.text.join('') : null };
    if (parts.calls.length > 0) message.tool_calls = parts.calls.map((call) => toolCall(call, calls++));
    if (!ctx.strict && parts.thoughts.length > 0) message.reasoning_content = parts.thoughts.join('');
    message.refusal = null;
    return {
      index: candidateIndex(candidate, position),
      message,
      logprobs: choiceLogprobs(candidate),
      finish_reason: finishReason(candidate.finishReason, parts.calls.length > 0),
    };
  });
  return {
    id: stringField(answer, 'responseId') ?? '',
    object: 'chat.completion',
    created: now,
    model: stringField(answer, 'modelVersion') ?? ctx.request.model,
    choices,
    usage: openaiUsage(answer.usageMetadata),
  };
}
