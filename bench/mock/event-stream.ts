/**
 * AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), encode side only:
 * what Bedrock's ConverseStream sends, one message per event.
 *
 *   ┌ total length (4) ┬ headers length (4) ┬ prelude CRC (4) ┬ headers ┬ payload ┬ message CRC (4) ┐
 *
 * All integers are big-endian. The prelude CRC covers the first 8 bytes; the message CRC covers
 * everything before it, prelude CRC included. Both are CRC-32 as gzip computes it, which is what
 * `zlib.crc32` returns. A header is a 1-byte name length, the name, a 1-byte value type and the
 * value; Bedrock only sends strings (type 7: a 2-byte length, then UTF-8 bytes). Written from
 * AWS's "Event stream encoding" description (Amazon Lex V2 and Transcribe developer guides).
 */

import { crc32 } from 'node:zlib';

/** Fixed bytes around headers and payload: two lengths and two CRCs. */
const OVERHEAD = 16;
const PRELUDE = 8;
const STRING_TYPE = 7;
/** Header names are length-prefixed by one byte, string values by two. */
const MAX_NAME = 0xff;
const MAX_VALUE = 0xffff;

/** One message's headers, written in the order given; every value is a string (type 7). */
export type EventHeaders = ReadonlyArray<readonly [name: string, value: string]>;

/**
 * Encodes one event-stream message.
 *
 * @example
 * encodeMessage([[':message-type', 'event'], [':event-type', 'messageStop']], '{"stopReason":"end_turn"}')
 */
export function encodeMessage(headers: EventHeaders, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const encoded = headers.map(encodeHeader);
  let headersLength = 0;
  for (const header of encoded) headersLength += header.length;
  const total = OVERHEAD + headersLength + body.length;
  const message = Buffer.allocUnsafe(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headersLength, 4);
  message.writeUInt32BE(crc32(message.subarray(0, PRELUDE)), PRELUDE);
  let offset = PRELUDE + 4;
  for (const header of encoded) offset += header.copy(message, offset);
  offset += body.copy(message, offset);
  message.writeUInt32BE(crc32(message.subarray(0, offset)), offset);
  return message;
}

/** An `event` message: `:event-type`, JSON content type, the event member as payload. */
export function eventMessage(eventType: string, payload: unknown): Buffer {
  return encodeMessage(
    [
      [':event-type', eventType],
      [':content-type', 'application/json'],
      [':message-type', 'event'],
    ],
    JSON.stringify(payload),
  );
}

/** An `exception` message, the way a modelled error arrives inside an open stream. */
export function exceptionMessage(exceptionType: string, message: string): Buffer {
  return encodeMessage(
    [
      [':exception-type', exceptionType],
      [':content-type', 'application/json'],
      [':message-type', 'exception'],
    ],
    JSON.stringify({ message }),
  );
}

function encodeHeader([name, value]: readonly [string, string]): Buffer {
  const nameLength = Buffer.byteLength(name);
  const valueLength = Buffer.byteLength(value);
  // The lengths are one and two bytes on the wire; a longer name or value cannot be framed.
  if (nameLength > MAX_NAME || valueLength > MAX_VALUE) throw new RangeError(`event-stream header too long: ${name}`);
  const header = Buffer.allocUnsafe(1 + nameLength + 1 + 2 + valueLength);
  let offset = header.writeUInt8(nameLength, 0);
  offset += header.write(name, offset, 'utf8');
  offset = header.writeUInt8(STRING_TYPE, offset);
  offset = header.writeUInt16BE(valueLength, offset);
  header.write(value, offset, 'utf8');
  return header;
}
