/**
 * The `console` plugin over real sockets: `/` and `/console` redirect to `/console/`, the page
 * carries its security and caching headers (ETag → 304), hashed assets are immutable and
 * gzipped, a gateway without a built console answers 503 with a code, and the built bundle stays
 * within its size budget (≤ 300 KB of gzipped JavaScript).
 */
import t from 'tap';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { startGateway, tempDir } from './helpers/gateway.js';
import { BUILT_CONSOLE_DIR } from '../plugins/console/index.js';

interface Manifest {
  version: string;
  files: Record<string, { bytes: number; gzip: number }>;
}

const manifest = JSON.parse(readFileSync(join(BUILT_CONSOLE_DIR, 'manifest.json'), 'utf8')) as Manifest;

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const res = await request(url, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers as Record<string, string>, body };
}

t.test('/ and /console redirect to /console/, which serves the page with strict headers', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, console]\n' });
  const root = await get(`${gw.url}/`);
  t.equal(root.status, 302);
  t.equal(root.headers.location, '/console/');
  const bare = await get(`${gw.url}/console`);
  t.equal(bare.status, 301);
  t.equal(bare.headers.location, '/console/');

  // Public: no key needed, even with `auth` in the pipeline.
  const page = await get(`${gw.url}/console/`);
  t.equal(page.status, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.equal(page.headers['cache-control'], 'no-cache');
  t.match(page.headers['content-security-policy'], /script-src 'self'/);
  t.match(page.headers['content-security-policy'], /frame-ancestors 'none'/);
  t.equal(page.headers['referrer-policy'], 'no-referrer');
  t.equal(page.headers['x-content-type-options'], 'nosniff');
  const html = page.body.toString('utf8');
  const script = /<script type="module" src="\.\/(assets\/app-[^"]+\.js)"><\/script>/.exec(html)?.[1];
  const style = /<link rel="stylesheet" href="\.\/(assets\/app-[^"]+\.css)">/.exec(html)?.[1];
  t.ok(script, 'the page names its hashed script');
  t.ok(style, 'the page names its hashed stylesheet');
  t.notMatch(html, /<script>[^<]/, 'no inline script (the CSP forbids it)');

  const again = await get(`${gw.url}/console/`, { 'if-none-match': page.headers.etag! });
  t.equal(again.status, 304, 'an unchanged page is not sent again');
  t.equal(again.body.length, 0);

  const js = await get(`${gw.url}/console/${script}`, { 'accept-encoding': 'gzip, br' });
  t.equal(js.status, 200);
  t.match(js.headers['content-type'], /^text\/javascript/);
  t.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(js.headers['content-encoding'], 'gzip');
  t.equal(js.headers.vary, 'accept-encoding');
  const plain = await get(`${gw.url}/console/${script}`);
  t.equal(plain.headers['content-encoding'], undefined, 'no gzip for a client that does not ask');
  t.same(gunzipSync(js.body), plain.body, 'the gzipped script is the script');
  t.equal(plain.body.length, manifest.files[script!]!.bytes, 'the served script is the built one');

  const css = await get(`${gw.url}/console/${style}`);
  t.match(css.headers['content-type'], /^text\/css/);

  const missing = await get(`${gw.url}/console/assets/nope.js`);
  t.equal(missing.status, 404, 'an unknown asset is a 404, not the page');
});

t.test('redirect_root: false leaves / alone', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - console: {redirect_root: false}\n' });
  t.equal((await get(`${gw.url}/`)).status, 404);
  t.equal((await get(`${gw.url}/console/`)).status, 200);
});

t.test('a console that is not built answers 503 console_not_built and the gateway still starts', async (t) => {
  const dir = tempDir();
  mkdirSync(join(dir, 'empty'));
  const gw = await startGateway(t, { yaml: `pipeline:\n  - console: {dir: ${JSON.stringify(join(dir, 'empty'))}}\n` });
  const res = await get(`${gw.url}/console/`);
  t.equal(res.status, 503);
  t.equal((JSON.parse(res.body.toString()) as { error: { code: string } }).error.code, 'console_not_built');
  t.ok(gw.logs.some((l) => l.level === 'warn' && /console is not built/.test(String(l.msg))), 'the start log says why');
});

t.test('the bundle stays within 300 KB of gzipped JavaScript', async (t) => {
  const js = Object.entries(manifest.files).filter(([f]) => f.endsWith('.js'));
  t.ok(js.length >= 1);
  const gzipped = js.reduce((n, [, s]) => n + s.gzip, 0);
  t.ok(gzipped <= 300 * 1024, `gzipped JavaScript: ${(gzipped / 1024).toFixed(1)} KB`);
});
