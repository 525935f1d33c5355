/**
 * A mock Realtime server for tests: a real `ws` WebSocket server on 127.0.0.1 and a free port,
 * speaking OpenAI's Realtime events, torn down with the test.
 *
 *   const up = await startRealtimeUpstream(t);
 *   // ws://127.0.0.1:<port>/v1/realtime?model=…            (OpenAI's form; custom host `${up.url}/v1`)
 *   // ws://127.0.0.1:<port>/openai/realtime?api-version=…&deployment=…   (Azure's form; custom host `up.url`)
 *
 * On connect it sends `session.created`. Client events it answers:
 *   response.create  ─▶ response.created, response.output_text.delta ×2, response.audio.delta,
 *                       response.done with `usage` (input 11 (3 cached), output 7, total 18 unless set)
 *   session.update   ─▶ session.updated
 *   test.close {code, reason} ─▶ closes the socket with that code
 *   test.drop        ─▶ cuts the TCP connection without a close frame
 *   test.flood {count, size} ─▶ `count` binary messages of `size` bytes at once (the first 4 bytes
 *                       carry the message's number), for backpressure tests
 * A binary message is echoed back as binary. Every handshake (path, query, headers, offered
 * subprotocols), every message and every close the client sent are recorded. `refuse` makes the
 * next handshakes answer with an HTTP error instead of 101.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Teardown } from './gateway.js';

export interface Handshake {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  protocols: string[];
}

export interface RealtimeUpstream {
  /** `http://127.0.0.1:<port>`: the custom host is `${url}/v1` for OpenAI's form, `url` for Azure's. */
  url: string;
  handshakes: Handshake[];
  /** Messages the clients sent, in order (text as strings, binary as Buffers). */
  received: Array<string | Buffer>;
  /** Close frames the clients sent (code, reason); 1006 when a client vanished. */
  closes: Array<{ code: number; reason: string }>;
  /** Answer handshakes with this HTTP status and JSON body instead of upgrading (undefined: upgrade). */
  refuse: { status: number; body: unknown } | undefined;
  /** The usage of each `response.done`. */
  usage: { input_tokens: number; output_tokens: number; cached_tokens: number };
  /** Open server-side sockets. */
  readonly sockets: ReadonlySet<WebSocket>;
  close(): Promise<void>;
}

let nextId = 1;
const id = (prefix: string): string => `${prefix}_${(nextId++).toString(36).padStart(6, '0')}`;

export async function startRealtimeUpstream(t: Teardown): Promise<RealtimeUpstream> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : false) });
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not a WebSocket","type":"invalid_request_error"}}');
  });
  const sockets = new Set<WebSocket>();
  const up: RealtimeUpstream = {
    url: '',
    handshakes: [],
    received: [],
    closes: [],
    refuse: undefined,
    usage: { input_tokens: 11, output_tokens: 7, cached_tokens: 3 },
    sockets,
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter((p) => p.length > 0);
    up.handshakes.push({ path: url.pathname, query: url.searchParams, headers: req.headers, protocols });
    const known = url.pathname === '/v1/realtime' || url.pathname === '/openai/realtime';
    const refusal = up.refuse ?? (known ? undefined : { status: 404, body: { error: { message: 'unknown path', type: 'invalid_request_error' } } });
    if (refusal !== undefined) {
      const body = JSON.stringify(refusal.body);
      socket.end(`HTTP/1.1 ${refusal.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, url));
  });

  function send(ws: WebSocket, event: Record<string, unknown>): void {
    ws.send(JSON.stringify({ event_id: id('event'), ...event }));
  }

  function serve(ws: WebSocket, url: URL): void {
    sockets.add(ws);
    const model = url.searchParams.get('model') ?? url.searchParams.get('deployment') ?? 'unknown';
    ws.on('close', (code, reason) => {
      sockets.delete(ws);
      up.closes.push({ code, reason: reason.toString() });
    });
    send(ws, { type: 'session.created', session: { id: id('sess'), object: 'realtime.session', model, modalities: ['text', 'audio'] } });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        up.received.push(data);
        ws.send(data, { binary: true });
        return;
      }
      const text = data.toString();
      up.received.push(text);
      let event: { type?: string; code?: number; reason?: string; count?: number; size?: number };
      try {
        event = JSON.parse(text) as typeof event;
      } catch {
        send(ws, { type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'not JSON' } });
        return;
      }
      if (event.type === 'session.update') send(ws, { type: 'session.updated', session: { model } });
      else if (event.type === 'response.create') respond(ws);
      else if (event.type === 'test.close') ws.close(event.code ?? 1000, event.reason ?? '');
      else if (event.type === 'test.drop') ws.terminate();
      else if (event.type === 'test.flood') {
        for (let i = 0; i < (event.count ?? 0); i++) {
          const chunk = Buffer.alloc(event.size ?? 1024, i % 256);
          chunk.writeUInt32BE(i, 0);
          ws.send(chunk, { binary: true });
        }
      }
    });
  }

  function respond(ws: WebSocket): void {
    const responseId = id('resp');
    const itemId = id('item');
    send(ws, { type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [] } });
    send(ws, { type: 'response.output_text.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: 'Hello' });
    send(ws, { type: 'response.output_text.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: ' there' });
    send(ws, { type: 'response.audio.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 1, delta: Buffer.from([0, 1, 2, 3, 250]).toString('base64') });
    const { input_tokens, output_tokens, cached_tokens } = up.usage;
    send(ws, {
      type: 'response.done',
      response: {
        id: responseId,
        object: 'realtime.response',
        status: 'completed',
        output: [{ id: itemId, type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hello there' }] }],
        usage: {
          total_tokens: input_tokens + output_tokens,
          input_tokens,
          output_tokens,
          input_token_details: { cached_tokens, text_tokens: input_tokens, audio_tokens: 0 },
          output_token_details: { text_tokens: output_tokens, audio_tokens: 0 },
        },
      },
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  up.url = `http://127.0.0.1:${address.port}`;
  t.teardown(() => up.close());
  return up;
}
