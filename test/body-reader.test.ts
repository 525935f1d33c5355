/**
 * core/body-reader.ts on a real HTTP/1.1 server: a body that came with its head is taken from
 * the stream's buffer a loop turn later, one that comes in pieces is read as it arrives, and both
 * are bounded alike. A client that leaves mid-body is answered at once, even when it left before
 * the reader looked again.
 */
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { readBody } from '../core/body-reader.js';
import type { GatewayError } from '../core/errors.js';
import type { Teardown } from './helpers/gateway.js';

type Outcome = { body: string } | { status: number; code: string; ms: number };

/** A server whose every request is read by readBody; `outcomes` get what each read gave. */
async function server(t: Teardown, limit: number, timeoutMs: number): Promise<{ port: number; next: () => Promise<Outcome> }> {
  const waiting: Array<(o: Outcome) => void> = [];
  const done: Outcome[] = [];
  const deliver = (o: Outcome): void => {
    const w = waiting.shift();
    if (w) w(o);
    else done.push(o);
  };
  const srv = http.createServer((req, res) => {
    const started = performance.now();
    // A request gone while its head was handled, as when the client's close came with the head.
    if (req.headers['x-gone'] !== undefined) req.destroy();
    readBody(req, req.headers, limit, timeoutMs).then(
      (body) => {
        deliver({ body: body.toString() });
        res.end('ok');
      },
      (err: unknown) => {
        const e = err as GatewayError;
        deliver({ status: e.status, code: e.code, ms: performance.now() - started });
        res.statusCode = e.status;
        res.end();
      },
    );
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  return {
    port: (srv.address() as AddressInfo).port,
    next: () =>
      done.length > 0
        ? Promise.resolve(done.shift()!)
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no request was read within 10 s')), 10_000);
            waiting.push((o) => {
              clearTimeout(timer);
              resolve(o);
            });
          }),
  };
}

const head = (extra: string): string => `POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}\r\n`;
const chunked = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;

function send(port: number, parts: Array<string | number>, end = false): net.Socket {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let delay = 0;
  for (const part of parts) {
    if (typeof part === 'number') delay += part;
    else setTimeout(() => socket.write(part), delay);
  }
  // Half-closed after the last write (a FIN behind the data, which reaches the server first).
  if (end) setTimeout(() => socket.end(), delay);
  return socket;
}

t.test('whole with its head, or in pieces: the same bytes', async (t) => {
  const { port, next } = await server(t, 1000, 5000);
  const text = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'h\u00e9llo' }] });
  const whole = send(port, [head(`Content-Length: ${Buffer.byteLength(text)}\r\n`) + text]);
  t.same(await next(), { body: text }, 'in the write of its head');
  whole.destroy();
  const pieces = send(port, [head(`Content-Length: ${Buffer.byteLength(text)}\r\n`), 30, text.slice(0, 7), 30, text.slice(7)]);
  t.same(await next(), { body: text }, 'after its head, in two pieces');
  pieces.destroy();
  const chunks = send(port, [head('Transfer-Encoding: chunked\r\n') + chunked(text)]);
  t.same(await next(), { body: text }, 'chunked, whole');
  chunks.destroy();
  const empty = send(port, [head('Content-Length: 0\r\n')]);
  t.same(await next(), { body: '' }, 'no body');
  empty.destroy();
});

t.test('over the limit, whole or in pieces: 413', async (t) => {
  const { port, next } = await server(t, 100, 5000);
  const big = 'x'.repeat(150);
  const whole = send(port, [head('Transfer-Encoding: chunked\r\n') + chunked(big)]);
  t.match(await next(), { status: 413, code: 'body_too_large' }, 'chunked, in the write of its head');
  whole.destroy();
  const pieces = send(port, [head('Transfer-Encoding: chunked\r\n'), 30, `${(90).toString(16)}\r\n${'x'.repeat(90)}\r\n`, 30, chunked('y'.repeat(60))]);
  t.match(await next(), { status: 413, code: 'body_too_large' }, 'chunked, in pieces');
  pieces.destroy();
});

t.test('a client that leaves mid-body gets its answer at once, not at the deadline', async (t) => {
  const { port, next } = await server(t, 1000, 5000);
  // Head and part of the body, then gone: the close comes with the data, before the reader looks again.
  send(port, [head('Content-Length: 100\r\n') + '{"model":'], true);
  const early = await next();
  t.match(early, { status: 400, code: 'bad_request' });
  t.ok('ms' in early && early.ms < 1000, 'answered before the deadline');
  // Gone before the reader looked again: its 'aborted' came before any listener.
  send(port, [head('Content-Length: 100\r\nx-gone: 1\r\n') + '{"model":']);
  const gone = await next();
  t.match(gone, { status: 400, code: 'bad_request' });
  t.ok('ms' in gone && gone.ms < 1000, 'answered before the deadline');
  // And once the reader is listening.
  send(port, [head('Content-Length: 100\r\n'), 30, '{"model":', 30], true);
  const later = await next();
  t.match(later, { status: 400, code: 'bad_request' });
  t.ok('ms' in later && later.ms < 1000, 'answered before the deadline');
});

t.test('a body that does not come: 408 at the deadline', async (t) => {
  const { port, next } = await server(t, 1000, 150);
  const socket = send(port, [head('Content-Length: 100\r\n') + '{"model":']);
  const outcome = await next();
  t.match(outcome, { status: 408, code: 'request_timeout' });
  t.ok('ms' in outcome && outcome.ms >= 140, 'not before the deadline');
  socket.destroy();
});
