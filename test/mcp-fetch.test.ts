/**
 * The `fetch` the MCP gateway gives the SDK's client transports (plugins/mcp-gateway/upstream.ts):
 * undici's request API behind a web `Response`, over a real socket. What the SDK relies on, and the
 * reason it is not undici's `fetch`: a transport passes one long-lived abort signal to every call,
 * and no call may leave a listener on it behind. A POST answered only with JSON-RPC responses is
 * handed over as JSON; any other answer as the stream it is, byte for byte.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getEventListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Agent } from 'undici';
import { guardedFetch } from '../plugins/mcp-gateway/upstream.js';

async function serve(t: { teardown(fn: () => unknown): void }, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function agent(t: { teardown(fn: () => unknown): void }): Agent {
  const a = new Agent();
  t.teardown(() => a.close());
  return a;
}

t.test('one long-lived signal over many calls keeps no listener per call', async (t) => {
  const seen: Array<{ body: string; header: string | undefined }> = [];
  const origin = await serve(t, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ body, header: req.headers['x-credential'] as string | undefined });
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
      res.end(JSON.stringify({ n: seen.length }));
    });
  });
  const fetch = guardedFetch(agent(t));
  const transport = new AbortController();
  const listeners: number[] = [];
  for (let i = 0; i < 50; i++) {
    const headers = new Headers({ 'content-type': 'application/json', 'x-credential': 'held' });
    const res = await fetch(`${origin}/mcp?i=${i}`, { method: 'POST', headers, body: JSON.stringify({ i }), signal: transport.signal });
    t.equal(res.status, 200);
    t.same(await res.json(), { n: i + 1 });
    listeners.push(getEventListeners(transport.signal, 'abort').length);
  }
  t.same(new Set(listeners), new Set([0]), 'every call took its listener off the signal when its answer ended');
  t.same(seen[49], { body: '{"i":49}', header: 'held' }, 'body and headers reach the server');
  const last = await fetch(`${origin}/mcp`, { method: 'POST', body: '{}' });
  t.equal(last.headers.get('set-cookie'), 'a=1, b=2', 'repeated response headers are kept');
  t.equal(last.statusText, 'OK');
  await last.body?.cancel();
});

t.test('aborting the long-lived signal ends a stream in the middle', async (t) => {
  const origin = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
  });
  const fetch = guardedFetch(agent(t));
  const transport = new AbortController();
  const res = await fetch(`${origin}/mcp`, { method: 'GET', signal: transport.signal });
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.getReader();
  t.equal(new TextDecoder().decode((await reader.read()).value), 'data: first\n\n');
  t.equal(getEventListeners(transport.signal, 'abort').length, 1, 'the open stream listens');
  transport.abort();
  await t.rejects(reader.read(), 'the pending read fails once the signal aborts');
});

t.test('redirects come back as they are; bodiless statuses have no body', async (t) => {
  let followed = 0;
  const origin = await serve(t, (req, res) => {
    if (req.url === '/elsewhere') {
      followed++;
      res.end('followed');
    } else if (req.url === '/accepted') {
      res.writeHead(202).end();
    } else if (req.url === '/empty') {
      res.writeHead(204).end();
    } else res.writeHead(307, { location: '/elsewhere' }).end('moved');
  });
  const fetch = guardedFetch(agent(t));
  const moved = await fetch(`${origin}/mcp`, { method: 'POST', body: '{}' });
  t.equal(moved.status, 307);
  t.equal(moved.headers.get('location'), '/elsewhere');
  await moved.body?.cancel();
  t.equal(followed, 0, 'not followed');
  const empty = await fetch(`${origin}/empty`, { method: 'DELETE' });
  t.equal(empty.status, 204);
  t.equal(empty.body, null);
  const accepted = await fetch(`${origin}/accepted`, { method: 'POST', body: '{}' });
  t.equal(accepted.status, 202);
  t.equal(await accepted.text(), '');
});

t.test('a refused connection rejects with its code', async (t) => {
  const origin = await serve(t, (_req, res) => res.end());
  const fetch = guardedFetch(agent(t));
  // A port that was just closed.
  const closed = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
  t.ok(origin);
  await t.rejects(fetch(`http://127.0.0.1:${closed}/mcp`, { method: 'POST', body: '{}' }), { code: 'ECONNREFUSED' });
  await t.rejects(fetch(`${origin}/mcp`, { method: 'POST', body: new URLSearchParams({ a: '1' }) }), TypeError, 'a body it would not send is refused, not dropped');
});

/** A JSON-RPC request as the SDK's client transport posts it. */
const call = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo' } });
const result = (id: number): Record<string, unknown> => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `answer ${id}` }] } });
const sse = (m: unknown, fields = ''): string => `${fields}event: message\ndata: ${JSON.stringify(m)}\n\n`;

t.test('a POST answered in SSE with only its response is handed over as JSON', async (t) => {
  let open: ServerResponse | undefined;
  const origin = await serve(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's-1' });
    if (req.url === '/held') {
      // The response, and the stream left open: the answer must not wait for its end.
      res.write(sse(result(7)));
      open = res;
      return;
    }
    // Split mid-event, and mid-character: the parser reassembles both.
    const text = Buffer.from(`: keep-alive\n\n${sse({ ...result(3), result: { content: [{ type: 'text', text: 'é' }] } })}`);
    const cut = text.indexOf(0xc3) + 1;
    res.write(text.subarray(0, cut));
    setTimeout(() => res.end(text.subarray(cut)), 5);
  });
  const fetch = guardedFetch(agent(t));
  const res = await fetch(`${origin}/mcp`, { method: 'POST', body: call(3) });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json', 'the SDK reads it as a JSON answer');
  t.equal(res.headers.get('mcp-session-id'), 's-1', 'the session header is kept');
  t.same(await res.json(), { ...result(3), result: { content: [{ type: 'text', text: 'é' }] } });
  t.same(JSON.parse(await res.text()), { ...result(3), result: { content: [{ type: 'text', text: 'é' }] } });
  const held = await fetch(`${origin}/held`, { method: 'POST', body: call(7) });
  t.same(await held.json(), result(7), 'answered while the upstream still holds its stream open');
  t.ok(open !== undefined && !open.writableEnded);
  open?.end();
});

t.test('an SSE answer with anything but responses reaches the SDK as the same stream', async (t) => {
  const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } };
  const bodies: Record<string, string[]> = {
    '/progress': [sse(progress), sse(result(1))],
    '/event-id': [sse(result(2), 'id: ev-1\n')],
    '/retry': ['retry: 500\n\n', sse(result(3))],
    '/named': ['event: other\ndata: {}\n\n', sse(result(4))],
    '/not-json': ['data: not json\n\n', sse(result(5))],
    '/nothing': [': only a comment\n\n'],
  };
  const origin = await serve(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    const parts = bodies[req.url!]!;
    let i = 0;
    const next = (): void => {
      if (i === parts.length) return void res.end();
      res.write(parts[i++]);
      setTimeout(next, 5);
    };
    next();
  });
  const fetch = guardedFetch(agent(t));
  for (const [path, parts] of Object.entries(bodies)) {
    const res = await fetch(`${origin}${path}`, { method: 'POST', body: call(1) });
    t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8', `${path}: a stream`);
    t.equal(await res.text(), parts.join(''), `${path}: every byte, in order`);
  }
});

t.test('a batch waits for the end of its stream; a JSON answer is read whole', async (t) => {
  const origin = await serve(t, (req, res) => {
    if (req.url === '/batch') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(result(1)));
      setTimeout(() => res.end(sse(result(2))), 5);
    } else if (req.url === '/bad-json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0",');
      setTimeout(() => res.end('"id":9,"result":{}}'), 5);
    }
  });
  const fetch = guardedFetch(agent(t));
  const batch = await fetch(`${origin}/batch`, { method: 'POST', body: `[${call(1)},${call(2)}]` });
  t.same(await batch.json(), [result(1), result(2)], 'both responses, in order');
  const json = await fetch(`${origin}/json`, { method: 'POST', body: call(9) });
  t.same(await json.json(), { jsonrpc: '2.0', id: 9, result: {} });
  const bad = await fetch(`${origin}/bad-json`, { method: 'POST', body: call(1) });
  await t.rejects(bad.json(), SyntaxError, 'a broken JSON answer fails as the SDK would see it fail');
});

t.test('an answer that breaks off before its response rejects the call', async (t) => {
  const origin = await serve(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': working\n\n');
    setTimeout(() => req.socket.destroy(), 5);
  });
  const fetch = guardedFetch(agent(t));
  await t.rejects(fetch(`${origin}/mcp`, { method: 'POST', body: call(1) }));
});
