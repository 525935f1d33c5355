/**
 * A real MCP server for tests, built with the official SDK, on 127.0.0.1 and a free port, torn
 * down with the test:
 *
 *   const up = await startMcpUpstream(t, { requireHeader: ['x-upstream-token', 's3cret'] });
 *   // up.url → http://127.0.0.1:<port>/mcp (Streamable HTTP, stateful sessions)
 *   //          http://127.0.0.1:<port>/sse (the older SSE transport, with `transport: 'sse'`)
 *
 * Tools: `echo` {text} → text · `add` {a,b} → the sum · `slow` {ms} → waits, honours cancellation
 * (recorded in `cancelled`) · `progress` {steps} → `steps` progress notifications then "done" ·
 * `crash` → destroys the socket carrying the call · `fail` → a result with isError.
 * Prompt `greet` {name}; resource `file:///readme`.
 *
 * Every HTTP request's method and headers are recorded in `requests`; every tool call in `calls`;
 * every JSON-RPC message POSTed over Streamable HTTP in `messages`. `forgetSessions()` drops the
 * Streamable HTTP sessions without a word, as a restarted server would (their ids then answer 404).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';

export interface McpUpstream {
  /** The MCP endpoint: …/mcp (Streamable HTTP) or …/sse (SSE transport). */
  url: string;
  /** The server's name in its initialize result. */
  name: string;
  requests: Array<{ method: string; headers: Record<string, string | string[] | undefined> }>;
  calls: Array<{ tool: string; args: unknown }>;
  /** Tools whose call was aborted by the client (notifications/cancelled). */
  cancelled: string[];
  /** The JSON-RPC messages POSTed over Streamable HTTP, as received. */
  messages: unknown[];
  forgetSessions(): void;
  /** The bytes of the next `tools/call` answer (Streamable HTTP) pass through `edit` on the wire: a server that answers wrongly. */
  corruptNextCall(edit: (text: string) => string): void;
  close(): Promise<void>;
}

export interface McpUpstreamOptions {
  name?: string;
  version?: string;
  /** Every HTTP request must carry this header with this value, else 401. */
  requireHeader?: [name: string, value: string];
  transport?: 'http' | 'sse';
  /** Streamable HTTP: answer POSTs with JSON instead of SSE (the SDK's `enableJsonResponse`). */
  json?: boolean;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export async function startMcpUpstream(t: { teardown(fn: () => unknown): void }, opts: McpUpstreamOptions = {}): Promise<McpUpstream> {
  const name = opts.name ?? 'test-upstream';
  const version = opts.version ?? '1.2.3';
  const mode = opts.transport ?? 'http';
  const requests: McpUpstream['requests'] = [];
  const calls: McpUpstream['calls'] = [];
  const cancelled: string[] = [];
  const messages: unknown[] = [];
  let corrupt: ((text: string) => string) | undefined;
  /** The socket carrying each in-flight request, by `${sessionId}|${jsonrpc id}` (Streamable HTTP)
   *  or the session's SSE stream socket by `${sessionId}|` (SSE). */
  const sockets = new Map<string, Socket>();
  const socketFor = (sessionId: string | undefined, requestId: string | number): Socket | undefined =>
    sockets.get(`${sessionId ?? ''}|${String(requestId)}`) ?? sockets.get(`${sessionId ?? ''}|`);

  const build = (): McpServer => {
    const server = new McpServer({ name, version }, { capabilities: { logging: {} } });
    server.registerTool('echo', { description: 'Echoes its text.', inputSchema: { text: z.string() } }, async (args) => {
      calls.push({ tool: 'echo', args });
      return { content: [{ type: 'text', text: args.text }] };
    });
    server.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } }, async (args) => {
      calls.push({ tool: 'add', args });
      return { content: [{ type: 'text', text: String(args.a + args.b) }] };
    });
    server.registerTool('slow', { description: 'Waits ms milliseconds.', inputSchema: { ms: z.number() } }, async (args, extra) => {
      calls.push({ tool: 'slow', args });
      try {
        await sleep(args.ms, extra.signal);
      } catch {
        cancelled.push('slow');
        throw new Error('cancelled');
      }
      return { content: [{ type: 'text', text: `slept ${args.ms}` }] };
    });
    server.registerTool('progress', { description: 'Reports progress steps.', inputSchema: { steps: z.number() } }, async (args, extra) => {
      calls.push({ tool: 'progress', args });
      const token = extra._meta?.progressToken;
      // Each notification is followed by a pause, the last one too: the SDK client handles a
      // notification a microtask later than a response, so one arriving in the same chunk as the
      // result would be dropped.
      for (let i = 1; i <= args.steps; i++) {
        if (token !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: args.steps, message: `step ${i}` } });
        }
        try {
          await sleep(20, extra.signal);
        } catch {
          cancelled.push('progress');
          throw new Error('cancelled');
        }
      }
      return { content: [{ type: 'text', text: 'done' }] };
    });
    server.registerTool('crash', { description: 'Drops the connection mid-call.' }, async (extra) => {
      calls.push({ tool: 'crash', args: {} });
      socketFor(extra.sessionId, extra.requestId)?.destroy();
      await sleep(50);
      throw new Error('crashed');
    });
    server.registerTool('fail', { description: 'Always fails.' }, async () => {
      calls.push({ tool: 'fail', args: {} });
      return { content: [{ type: 'text', text: 'it failed' }], isError: true };
    });
    server.registerPrompt('greet', { description: 'Greets someone.', argsSchema: { name: z.string() } }, ({ name: who }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${who}!` } }],
    }));
    server.registerResource('readme', 'file:///readme', { description: 'The readme.', mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the readme.' }],
    }));
    return server;
  };

  const httpSessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const sseSessions = new Map<string, { transport: SSEServerTransport; server: McpServer }>();

  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (text === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };

  const remember = (sessionId: string | undefined, body: unknown, socket: Socket): string[] => {
    const keys: string[] = [];
    for (const msg of Array.isArray(body) ? body : [body]) {
      const id = (msg as { id?: unknown } | null)?.id;
      if (typeof id === 'string' || typeof id === 'number') {
        const key = `${sessionId ?? ''}|${String(id)}`;
        sockets.set(key, socket);
        keys.push(key);
      }
    }
    return keys;
  };

  const fail = (res: ServerResponse, status: number, message: string): void => {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
  };

  const handleHttp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (body !== undefined) messages.push(...(Array.isArray(body) ? body : [body]));
    if (corrupt !== undefined && (body as { method?: unknown } | undefined)?.method === 'tools/call') {
      const edit = corrupt;
      corrupt = undefined;
      const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
      const end = res.end.bind(res) as (chunk?: unknown, ...rest: unknown[]) => ServerResponse;
      const edited = (chunk: unknown): unknown => (typeof chunk === 'string' || Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? edit(Buffer.from(chunk as Uint8Array).toString('utf8')) : chunk);
      res.write = ((chunk: unknown, ...rest: unknown[]) => write(edited(chunk), ...rest)) as typeof res.write;
      res.end = ((chunk?: unknown, ...rest: unknown[]) => (typeof chunk === 'function' || chunk === undefined ? end(chunk, ...rest) : end(edited(chunk), ...rest))) as typeof res.end;
    }
    let session = sessionId === undefined ? undefined : httpSessions.get(sessionId);
    if (session === undefined) {
      if (sessionId !== undefined) return fail(res, 404, 'Session not found');
      if (req.method !== 'POST') return fail(res, 400, 'No session');
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: opts.json === true,
        onsessioninitialized: (id) => void httpSessions.set(id, { transport, server }),
      });
      const server = build();
      transport.onclose = () => {
        if (transport.sessionId !== undefined) httpSessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      session = { transport, server };
    }
    const keys = remember(sessionId, body, req.socket);
    res.on('close', () => keys.forEach((k) => sockets.delete(k)));
    await session.transport.handleRequest(req, res, body);
  };

  const handleSse = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (req.method === 'GET' && path === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      const server = build();
      sseSessions.set(transport.sessionId, { transport, server });
      sockets.set(`${transport.sessionId}|`, req.socket);
      res.on('close', () => {
        sseSessions.delete(transport.sessionId);
        sockets.delete(`${transport.sessionId}|`);
        void server.close().catch(() => undefined);
      });
      await server.connect(transport);
      return;
    }
    if (req.method === 'POST' && path === '/messages') {
      const sessionId = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
      const session = sseSessions.get(sessionId);
      if (session === undefined) return fail(res, 404, 'Session not found');
      const body = await readBody(req);
      await session.transport.handlePostMessage(req, res, body);
      return;
    }
    fail(res, 404, 'Not found');
  };

  const http = createServer((req, res) => {
    requests.push({ method: req.method ?? '', headers: { ...req.headers } });
    if (opts.requireHeader !== undefined) {
      const [header, value] = opts.requireHeader;
      if (req.headers[header.toLowerCase()] !== value) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'unauthorized' }));
        return;
      }
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const work = mode === 'sse' ? handleSse(req, res, path) : path === '/mcp' ? handleHttp(req, res) : Promise.resolve(fail(res, 404, 'Not found'));
    work.catch((err: unknown) => fail(res, 500, err instanceof Error ? err.message : String(err)));
  });
  const open = new Set<Socket>();
  http.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      for (const { transport, server } of [...httpSessions.values(), ...sseSessions.values()]) {
        await transport.close().catch(() => undefined);
        await server.close().catch(() => undefined);
      }
      httpSessions.clear();
      sseSessions.clear();
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    })());
  t.teardown(close);
  const forgetSessions = (): void => httpSessions.clear();
  const corruptNextCall = (edit: (text: string) => string): void => void (corrupt = edit);
  return { url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`, name, requests, calls, cancelled, messages, forgetSessions, corruptNextCall, close };
}
