/**
 * Writes reply values to the socket and applies the timing and stream faults on the way.
 *
 * The non-stream path is the benchmark's hot path: one `JSON.stringify`, one `writeHead`, one
 * `end`. Streams honour backpressure and send each event (an SSE frame, or one binary
 * event-stream message for Bedrock) as its own write, so a client sees the same framing it would
 * from a real provider.
 */

import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Directives } from './directives.js';
import type { MockReply, SseReply } from './route.js';

/**
 * Runs `fn` after `ms`, unless the response closes first (client gone, socket reset), in which
 * case the timer is cleared so a hung or aborted request leaves nothing behind.
 */
export function later(res: ServerResponse, ms: number, fn: () => void): void {
  if (ms <= 0) {
    fn();
    return;
  }
  const timer = setTimeout(fire, ms);
  res.once('close', cancel);
  function fire(): void {
    res.off('close', cancel);
    fn();
  }
  function cancel(): void {
    clearTimeout(timer);
  }
}

/**
 * Sends `reply` after the `first_byte_delay` directive. `headers` is this request's own object
 * (request id, retry hints) and is completed here with the content headers.
 */
export function writeReply(
  res: ServerResponse,
  reply: MockReply,
  options: { directives: Directives; headers: OutgoingHttpHeaders },
): void {
  const { directives, headers } = options;
  if (reply.headers !== undefined) Object.assign(headers, reply.headers);
  later(res, directives.firstByteDelay, function firstByte() {
    switch (reply.kind) {
      case 'json':
        writeJsonBody(res, reply.status, reply.body, headers);
        return;
      case 'raw':
        headers['content-type'] = reply.contentType;
        headers['content-length'] = Buffer.byteLength(reply.body);
        res.writeHead(reply.status, headers);
        res.end(reply.body);
        return;
      case 'sse':
        playSse(res, reply, directives, headers);
        return;
    }
  });
}

/**
 * Serialises a JSON reply. A reply that echoes request fields (the Responses API echoes `text`,
 * `tools`, `metadata`) can nest deeper than JSON.stringify recurses; a real provider refuses such
 * a request with a 400, and the mock must not die of a RangeError in the process it shares with a test.
 */
function writeJsonBody(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders): void {
  let payload: string;
  try {
    payload = JSON.stringify(body);
  } catch {
    const error = { message: 'The request is nested too deeply.', type: 'invalid_request_error', param: null, code: null };
    writeJson(res, 400, JSON.stringify({ error }), headers);
    return;
  }
  writeJson(res, status, payload, headers);
}

export function writeJson(res: ServerResponse, status: number, payload: string, headers: OutgoingHttpHeaders): void {
  headers['content-type'] = 'application/json';
  headers['content-length'] = Buffer.byteLength(payload);
  res.writeHead(status, headers);
  res.end(payload);
}

/**
 * Plays a stream reply, SSE or binary alike:
 *
 *   headers+frame0 ─chunk_delay─ frame1 ─chunk_delay─ … frameN (end)
 *
 * `error_event` replaces everything after the second content frame with the dialect's error
 * frame; `reset=mid_stream` destroys the socket once `reset_after` frames reached the kernel.
 */
function playSse(res: ServerResponse, reply: SseReply, d: Directives, headers: OutgoingHttpHeaders): void {
  let frames = reply.frames;
  if (d.errorEvent) {
    const cut = Math.min(reply.firstContent + 2, frames.length);
    frames = [...frames.slice(0, cut), reply.errorFrame(cut)];
  }
  const resetAt = d.reset === 'mid_stream' ? Math.min(d.resetAfter, frames.length) : -1;
  headers['content-type'] = reply.contentType ?? 'text/event-stream';
  headers['cache-control'] = 'no-cache';
  res.writeHead(200, headers);
  let index = 0;

  if (resetAt === 0) {
    // Headers only: push them out, then cut the connection once they are flushed.
    res.flushHeaders();
    res.socket?.write('', destroy);
    return;
  }
  pump();

  function pump(): void {
    for (;;) {
      const frame = frames[index++];
      if (index === resetAt) {
        // Destroy only after the frame was handed to the socket, or the client might not see it.
        res.write(frame, destroy);
        return;
      }
      if (index === frames.length) {
        res.end(frame);
        return;
      }
      if (!res.write(frame)) {
        res.once('drain', paced);
        return;
      }
      if (d.chunkDelay > 0) {
        later(res, d.chunkDelay, pump);
        return;
      }
    }
  }
  function paced(): void {
    later(res, d.chunkDelay, pump);
  }
  function destroy(): void {
    res.destroy();
  }
}
