/**
 * The bare proxy: node:http in front, an undici Pool behind, nothing in between. It is the floor
 * for any Node gateway on this machine: whatever the gateway costs above it is the price of its
 * features, and whatever this costs above the direct call is the price of Node itself.
 *
 *   client ──h1──► http.Server ──dispatch()──► undici Pool ──h1 keep-alive──► --upstream
 *
 * It uses `Pool.dispatch` with the undici v7 handler API, the fastest of the variants measured
 * in stack-notes.md §5 (~1.5× request()+pipeline()). Backpressure: `write() === false` pauses the
 * upstream read until 'drain'. A client that goes away aborts the upstream request.
 *
 * CLI: `node dist/bench/bare-proxy.js --upstream http://127.0.0.1:9000 [--port 0] [--host 127.0.0.1]`
 * prints `bare proxy listening on http://HOST:PORT` when ready; SIGTERM/SIGINT close and exit 0.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';

/**
 * RFC 9110 §7.6.1 hop-by-hop headers, plus `host` (undici sets it from the origin) and `expect`
 * (undici 7 rejects `expect: 100-continue`). `keep-alive`, `transfer-encoding` and `upgrade`
 * would make undici throw UND_ERR_INVALID_ARG if passed through.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect']);

/** Request headers as undici's flat [name, value, ...] list, hop-by-hop ones dropped. */
function forwardHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

function responseHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) if (!HOP_BY_HOP.has(name)) out[name] = headers[name];
  return out;
}

/** Streams one upstream response into `res`; one instance per request. */
class ForwardHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;

  constructor(private readonly res: ServerResponse) {
    res.once('close', () => {
      // Closed before we finished writing: the client left, so stop reading upstream.
      if (!res.writableFinished) this.controller?.abort(new Error('client closed the connection'));
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.res.writeHead(statusCode, responseHeaders(headers));
    // SSE: send the head now, so a client sees the stream open before the first event.
    if (String(headers['content-type']).startsWith('text/event-stream')) this.res.flushHeaders();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.res.write(chunk)) return;
    controller.pause();
    this.res.once('drain', () => controller.resume());
  }

  onResponseEnd(): void {
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.res.headersSent) {
      // Mid-body: the only honest signal left is a broken connection.
      this.res.destroy(error);
      return;
    }
    const body = JSON.stringify({ error: { message: `bare proxy: ${error.message}`, type: 'upstream_error' } });
    this.res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    this.res.end(body);
  }
}

export interface BareProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the proxy.
 *
 * @example
 * const proxy = await startBareProxy({ upstream: 'http://127.0.0.1:9000', port: 0 });
 */
export async function startBareProxy(options: { upstream: string; port: number; host?: string }): Promise<BareProxy> {
  // 128 connections: more than any benchmark's concurrency, so requests never queue in the pool.
  const pool = new Pool(options.upstream, { connections: 128, keepAliveTimeout: 60_000 });
  const server = createServer({ noDelay: true, requestTimeout: 0, keepAliveTimeout: 65_000 }, function proxy(req: IncomingMessage, res: ServerResponse) {
    const hasBody = req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
    pool.dispatch(
      { method: req.method as Dispatcher.HttpMethod, path: req.url ?? '/', headers: forwardHeaders(req.rawHeaders), body: hasBody ? req : null },
      new ForwardHandler(res),
    );
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { upstream: { type: 'string' }, port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } },
  });
  if (values.upstream === undefined) throw new Error('--upstream http://HOST:PORT is required');
  const port = Number.parseInt(values.port, 10);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port: ${values.port}`);
  const proxy = await startBareProxy({ upstream: values.upstream, port, host: values.host });
  process.stdout.write(`bare proxy listening on ${proxy.url}\n`);
  const stop = (): void => {
    void proxy.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch(function fail(error: unknown) {
    process.stderr.write(`bare proxy failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
