/**
 * The `console` plugin: the operator console (a single-page app built from console/ into
 * dist/console by `npm install`) served on the gateway's own port.
 *
 *   GET /              302 → /console/          (with `redirect_root`, the default)
 *   GET /console       301 → /console/
 *   GET /console/      index.html               no-cache, ETag, a strict Content-Security-Policy
 *   GET /console/assets/<name>-<hash>.<ext>    a year, immutable (the hash changes with the content)
 *
 * The files are read and gzipped once at boot; a request costs a map lookup. The console talks to
 * the gateway only through the public admin API, with the operator's key in a header (never a
 * URL or cookie), so these routes are public and hold nothing secret.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { definePlugin, headerString, reply, type GatewayContext, type Reply, type RouteDefinition } from '../../core/index.js';
import { consoleOptionsSchema, type ConsoleOptions } from './schema.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Scripts only from this origin; no framing; the API on the same origin. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Chart and layout libraries set element styles from script; no inline <style> is served.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  headers: Record<string, string>;
  etag: string;
}

/** Where `npm install` puts the built console: dist/console beside dist/plugins. */
export const BUILT_CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

function loadAsset(path: string, cacheControl: string, extra: Record<string, string>): Asset {
  const body = readFileSync(path);
  const ext = path.slice(path.lastIndexOf('.'));
  const type = TYPES[ext] ?? 'application/octet-stream';
  const compressible = type.startsWith('text/') || type === 'application/json' || type === 'image/svg+xml';
  const gzip = compressible && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined;
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, gzip, etag, headers: { 'content-type': type, 'cache-control': cacheControl, etag, ...(gzip ? { vary: 'accept-encoding' } : {}), ...extra } };
}

function send(ctx: GatewayContext, asset: Asset): Reply {
  if (headerString(ctx.headers, 'if-none-match') === asset.etag) return reply(304, undefined, { etag: asset.etag, 'cache-control': asset.headers['cache-control']! });
  const gzip = asset.gzip !== undefined && /\bgzip\b/.test(headerString(ctx.headers, 'accept-encoding') ?? '');
  return gzip ? reply(200, asset.gzip, { ...asset.headers, 'content-encoding': 'gzip' }) : reply(200, asset.body, asset.headers);
}

const redirect = (to: string, status: number): RouteDefinition['handler'] => () => reply(status, undefined, { location: to, 'cache-control': 'no-cache' });

export default definePlugin<ConsoleOptions>({
  name: 'console',
  configSchema: consoleOptionsSchema,
  setup(app, options) {
    const dir = options.dir === undefined ? BUILT_CONSOLE_DIR : resolve(options.dir);
    const meta = { public: true, console: true };
    const routes: RouteDefinition[] = [
      { method: 'GET', path: '/console', body: 'none', meta, handler: redirect('/console/', 301) },
    ];
    if (options.redirect_root) routes.push({ method: 'GET', path: '/', body: 'none', meta, handler: redirect('/console/', 302) });

    if (!existsSync(join(dir, 'index.html'))) {
      app.log.warn('the console is not built: /console/ answers 503 (run `npm run build`)', { dir });
      const missing = reply(503, { error: { message: 'The console is not built. Run `npm run build` (or `npm install`) and restart.', type: 'server_error', code: 'console_not_built' } });
      routes.push({ method: 'GET', path: '/console/', body: 'none', meta, handler: () => missing });
      return { routes };
    }

    const index = loadAsset(join(dir, 'index.html'), 'no-cache', { 'content-security-policy': CSP, ...SECURITY_HEADERS });
    routes.push({ method: 'GET', path: '/console/', body: 'none', meta, handler: (ctx) => send(ctx, index) });
    routes.push({ method: 'GET', path: '/console/index.html', body: 'none', meta, handler: (ctx) => send(ctx, index) });
    let bytes = index.body.length;
    const assetsDir = join(dir, 'assets');
    for (const file of existsSync(assetsDir) ? filesUnder(assetsDir) : []) {
      const asset = loadAsset(file, 'public, max-age=31536000, immutable', { 'x-content-type-options': 'nosniff' });
      bytes += asset.body.length;
      const path = `/console/${relative(dir, file).split('\\').join('/')}`;
      routes.push({ method: 'GET', path, body: 'none', meta, handler: (ctx) => send(ctx, asset) });
    }
    app.log.debug('console assets loaded', { files: routes.length - 3, bytes });
    return { routes };
  },
});
