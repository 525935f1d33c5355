/**
 * OpenAI `chat.completion` → Anthropic Message.
 *
 *   choices[0].message.reasoning_content ► {type:'thinking', thinking, signature:''} (non-strict only)
 *   choices[0].message.content ──────────► {type:'text', text}                        (when non-empty)
 *   choices[0].message.refusal ──────────► {type:'text', text}, stop_reason 'refusal'
 *   choices[0].message.tool_calls ───────► {type:'tool_use', id, name, input}
 *   choices[0].finish_reason ────────────► stop_reason (see stop-reasons.ts)
 *   usage ───────────────────────────────► usage (see usage.ts)
 *
 * An answer with no text and no tool calls has `content: []`: Anthropic documents such empty
 * `end_turn` answers itself ("Empty responses with end_turn"), so clients handle them, whereas an
 * invented empty text block is something Anthropic never sends (it rejects empty text blocks).
 *
 * The thinking block's `signature` is empty: only Anthropic can sign its reasoning, and a client
 * that sends the block back is translated again, where thinking blocks are dropped.
 */
import { Errors } from '../../errors.js';
import { isRecord, parseArguments, stringField, texts } from '../../providers/openai-shape.js';
import { messageId, randomId } from './ids.js';
import { stopReason } from './stop-reasons.js';
import { anthropicUsage } from './usage.js';
import type { ContentBlock, IdFactory, IngressOptions, Json } from './wire.js';

/**
 * `request` is the client's Anthropic body (its `model` names the answer when upstream sends none).
 * Throws a 502 GatewayError when the upstream answer has no choice to translate.
 */
export function buildMessage(body: Json, request: Json, options: IngressOptions): Json {
  const newId = options.newId ?? randomId;
  const choice = Array.isArray(body.choices) ? body.choices[0] : undefined;
  if (!isRecord(choice)) throw Errors.upstreamInvalidResponse('The upstream answer holds no choice to translate.');
  const message = isRecord(choice.message) ? choice.message : {};
  const id = messageId(body.id, newId);

  const content: ContentBlock[] = [];
  const reasoning = stringField(message, 'reasoning_content');
  if (!options.strict && reasoning !== undefined && reasoning.length > 0) {
    content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  }
  const text = texts(message.content).join('');
  if (text.length > 0) content.push({ type: 'text', text });
  const refusal = stringField(message, 'refusal');
  const refused = refusal !== undefined && refusal.length > 0;
  if (refused) content.push({ type: 'text', text: refusal });

  const calls = toolUses(message, newId);
  content.push(...calls);

  return {
    id,
    type: 'message',
    role: 'assistant',
    model: stringField(body, 'model') ?? request.model,
    content,
    stop_reason: stopReason({ finishReason: choice.finish_reason, toolUse: calls.length > 0, refusal: refused }),
    stop_sequence: null,
    usage: anthropicUsage(body.usage),
  };
}

/** `tool_calls`, or the legacy single `function_call` (which has no id, so it gets one). */
function toolUses(message: Json, newId: IdFactory): ContentBlock[] {
  let calls: unknown[] = [];
  if (Array.isArray(message.tool_calls)) calls = message.tool_calls;
  else if (isRecord(message.function_call)) calls = [{ function: message.function_call }];
  const out: ContentBlock[] = [];
  for (const call of calls) {
    if (!isRecord(call) || !isRecord(call.function)) continue;
    out.push({
      type: 'tool_use',
      id: stringField(call, 'id') || newId('toolu'),
      name: stringField(call.function, 'name') ?? '',
      input: parseArguments(call.function.arguments),
    });
  }
  return out;
}
