/**
 * OpenAI's SSE framing for chat completions and legacy completions.
 *
 * Chat, one choice, `include_usage` on:
 *
 *   data: {…"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},…}],"usage":null}
 *   data: {…"choices":[{"index":0,"delta":{"content":"Mock "},…}],"usage":null}        × chunks
 *   data: {…"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}
 *   data: {…"choices":[],"usage":{…}}
 *   data: [DONE]
 *
 * Frames share one JSON prefix (`{"id":…,"choices":[`), built once per stream, so each event
 * costs one small `JSON.stringify` of its choice.
 */

import type { ChatAnswer, CompletionAnswer } from './openai.js';
import { OPENAI_STREAM_ERROR_FRAME } from './openai-errors.js';
import type { SseReply } from './route.js';
import { splitPieces } from './text.js';

export interface OpenAIStreamOptions {
  readonly chunks: number;
  readonly includeUsage: boolean;
}

const DONE_FRAME = 'data: [DONE]\n\n';

/** Frames of one stream: `data: <prefix><choice JSON><suffix>`. */
interface Framer {
  choice(choice: unknown): string;
  usage(usage: unknown): string;
}

function framer(
  head: { id: string; object: string; created: number; model: string },
  includeUsage: boolean,
): Framer {
  const prefix =
    `data: {"id":${JSON.stringify(head.id)},"object":"${head.object}","created":${head.created},` +
    `"model":${JSON.stringify(head.model)},"system_fingerprint":"fp_mock","choices":[`;
  // With include_usage every chunk carries `"usage":null`; only the extra last chunk has numbers.
  const suffix = includeUsage ? '],"usage":null}\n\n' : ']}\n\n';
  return {
    choice: (choice) => prefix + JSON.stringify(choice) + suffix,
    usage: (usage) => `${prefix}],"usage":${JSON.stringify(usage)}}\n\n`,
  };
}

/** A chat completion as OpenAI streams it, text or tool call, for every choice. */
export function chatStream(answer: ChatAnswer, options: OpenAIStreamOptions): SseReply {
  const frame = framer({ ...answer, object: 'chat.completion.chunk' }, options.includeUsage);
  const call = answer.toolCall;
  const pieces = splitPieces(call === undefined ? (answer.content ?? '') : call.arguments, options.chunks);
  const frames: string[] = [];

  for (let index = 0; index < answer.n; index++) {
    // The first delta names the role; a tool call's first delta also carries its id and name
    // with empty arguments, which then arrive in fragments.
    const delta =
      call === undefined
        ? { role: 'assistant', content: '', refusal: null }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
            refusal: null,
          };
    frames.push(frame.choice(chatChoice(index, delta, null)));
  }
  const firstContent = frames.length;
  for (const piece of pieces) {
    for (let index = 0; index < answer.n; index++) {
      const delta =
        call === undefined ? { content: piece } : { tool_calls: [{ index: 0, function: { arguments: piece } }] };
      frames.push(frame.choice(chatChoice(index, delta, null)));
    }
  }
  const finish = call === undefined ? 'stop' : 'tool_calls';
  for (let index = 0; index < answer.n; index++) frames.push(frame.choice(chatChoice(index, {}, finish)));
  if (options.includeUsage) frames.push(frame.usage(answer.usage));
  frames.push(DONE_FRAME);
  return { kind: 'sse', frames, firstContent, errorFrame: openaiErrorFrame };
}

function chatChoice(index: number, delta: unknown, finishReason: string | null): unknown {
  return { index, delta, logprobs: null, finish_reason: finishReason };
}

/** A legacy completion as OpenAI streams it: text pieces, then an empty text with the finish reason. */
export function completionStream(answer: CompletionAnswer, options: OpenAIStreamOptions): SseReply {
  const frame = framer({ ...answer, object: 'text_completion' }, options.includeUsage);
  const frames: string[] = [];
  // All choices of one prompt share a text, so the split is done once per distinct text.
  const split = new Map<string, string[]>();
  const piecesOf = (text: string): string[] => {
    let pieces = split.get(text);
    if (pieces === undefined) split.set(text, (pieces = splitPieces(text, options.chunks)));
    return pieces;
  };
  const longest = Math.max(0, ...answer.texts.map((text) => piecesOf(text).length));
  for (let step = 0; step < longest; step++) {
    answer.texts.forEach(function pushPiece(text, index) {
      const piece = piecesOf(text)[step];
      if (piece !== undefined) frames.push(frame.choice(completionChoice(index, piece, null)));
    });
  }
  answer.texts.forEach(function pushFinish(_text, index) {
    frames.push(frame.choice(completionChoice(index, '', 'stop')));
  });
  if (options.includeUsage) frames.push(frame.usage(answer.usage));
  frames.push(DONE_FRAME);
  return { kind: 'sse', frames, firstContent: 0, errorFrame: openaiErrorFrame };
}

function completionChoice(index: number, text: string, finishReason: string | null): unknown {
  return { text, index, logprobs: null, finish_reason: finishReason };
}

function openaiErrorFrame(): string {
  return OPENAI_STREAM_ERROR_FRAME;
}
