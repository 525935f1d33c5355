/**
 * AWS event-stream bytes → one event per message, for the Converse stream translator.
 *
 *   ┌ total length (4) ┬ headers length (4) ┬ prelude CRC (4) ┬ headers ┬ payload ┬ message CRC (4) ┐
 *
 * Bytes arrive split anywhere; whole messages are cut out by their total length and decoded (CRCs
 * checked) by `@smithy/eventstream-codec`. Each message becomes an {@link SseEvent}:
 *
 *   :message-type event      → { event: <:event-type>, data: <payload text> }
 *   :message-type exception  → { event: 'exception', data: {"type": <:exception-type>, "message": …} }
 *   :message-type error      → { event: 'exception', data: {"type": <:error-code>, "message": <:error-message>} }
 *
 * A corrupt or truncated stream becomes an exception event too, so the translator ends the answer
 * with an error event instead of silently stopping.
 */
import { createRequire } from 'node:module';
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type { SseEvent } from '../../sse/sse-parser.js';
import type { EventDecoder, StreamDecoder } from '../types.js';

type Headers = Record<string, { type: string; value: unknown }>;

const PRELUDE = 12;
/** AWS caps a message at 16 MB; a larger length prefix means the stream is corrupt. */
const MAX_MESSAGE = 16 << 20;

const require = createRequire(import.meta.url);
let loaded: { codec: EventStreamCodec; toUtf8: (input: Uint8Array) => string } | undefined;
/** The AWS codec, loaded with the first Bedrock stream (not with every gateway's start). */
function codecs(): NonNullable<typeof loaded> {
  if (loaded === undefined) {
    const { EventStreamCodec } = require('@smithy/eventstream-codec') as typeof import('@smithy/eventstream-codec');
    const { fromUtf8, toUtf8 } = require('@smithy/util-utf8') as typeof import('@smithy/util-utf8');
    loaded = { codec: new EventStreamCodec(toUtf8, fromUtf8), toUtf8 };
  }
  return loaded;
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name]?.value;
  return typeof value === 'string' ? value : undefined;
}

function exception(type: string, message: string): SseEvent {
  return { event: 'exception', data: JSON.stringify({ type, message }) };
}

function messageText(payload: string): string {
  try {
    const parsed = JSON.parse(payload) as { message?: unknown; Message?: unknown };
    const m = parsed.message ?? parsed.Message;
    if (typeof m === 'string') return m;
  } catch {
    // not JSON: the payload is the message
  }
  return payload;
}

function toEvent(bytes: Uint8Array): SseEvent {
  const { codec, toUtf8 } = codecs();
  const message = codec.decode(bytes);
  const headers = message.headers as Headers;
  const payload = toUtf8(message.body);
  switch (header(headers, ':message-type')) {
    case 'event':
      return { event: header(headers, ':event-type') ?? 'unknown', data: payload };
    case 'exception':
      return exception(header(headers, ':exception-type') ?? 'unknownException', messageText(payload));
    default:
      return exception(header(headers, ':error-code') ?? 'unknownError', header(headers, ':error-message') ?? messageText(payload));
  }
}

class AwsEventDecoder implements EventDecoder {
  #pending: Buffer = Buffer.alloc(0);
  #broken = false;

  push(chunk: Buffer): SseEvent[] {
    if (this.#broken) return [];
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const out: SseEvent[] = [];
    while (this.#pending.length >= PRELUDE) {
      const total = this.#pending.readUInt32BE(0);
      if (total < PRELUDE + 4 || total > MAX_MESSAGE) return this.#fail(out, `a message claims ${total} bytes`);
      if (this.#pending.length < total) break;
      try {
        out.push(toEvent(this.#pending.subarray(0, total)));
      } catch (err) {
        return this.#fail(out, err instanceof Error ? err.message : String(err));
      }
      this.#pending = this.#pending.subarray(total);
    }
    return out;
  }

  end(): SseEvent[] {
    if (this.#broken || this.#pending.length === 0) return [];
    return this.#fail([], `the stream ended inside a message (${this.#pending.length} bytes left)`);
  }

  #fail(out: SseEvent[], why: string): SseEvent[] {
    this.#broken = true;
    this.#pending = Buffer.alloc(0);
    out.push(exception('invalidEventStreamException', `Bedrock sent an unreadable event stream: ${why}.`));
    return out;
  }
}

export const awsEventStream: StreamDecoder = {
  contentType: 'application/vnd.amazon.eventstream',
  create: () => new AwsEventDecoder(),
};
