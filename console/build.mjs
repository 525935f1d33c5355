/**
 * Builds the console (console/src, Preact + TSX) into dist/console: one hashed script and one
 * hashed stylesheet under assets/, an index.html that names them, and manifest.json with their
 * sizes. Run by `npm install` (the `prepare` step) and `npm run build`; no network.
 *
 *   node console/build.mjs [--watch]
 */
import { build, context } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'dist', 'console');
const watch = process.argv.includes('--watch');

/** @type {import('esbuild').BuildOptions} */
const options = {
  entryPoints: { app: join(here, 'src', 'main.tsx') },
  bundle: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  minify: !watch,
  sourcemap: watch ? 'inline' : false,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
};

function writeIndex(result) {
  const files = Object.keys(result.metafile.outputs).map((f) => relative(out, f).split('\\').join('/'));
  const script = files.find((f) => f.endsWith('.js'));
  const style = files.find((f) => f.endsWith('.css'));
  const html = readFileSync(join(here, 'index.html'), 'utf8')
    .replace('%STYLE%', style ? `<link rel="stylesheet" href="./${style}">` : '')
    .replace('%SCRIPT%', `<script type="module" src="./${script}"></script>`);
  writeFileSync(join(out, 'index.html'), html);
  const sizes = {};
  for (const f of files) {
    const bytes = readFileSync(join(out, f));
    sizes[f] = { bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  }
  const version = createHash('sha256').update(html).digest('hex').slice(0, 12);
  writeFileSync(join(out, 'manifest.json'), JSON.stringify({ version, files: sizes }, null, 2));
  return sizes;
}

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
if (watch) {
  const ctx = await context({ ...options, plugins: [{ name: 'index', setup: (b) => b.onEnd((r) => r.errors.length === 0 && writeIndex(r)) }] });
  await ctx.watch();
  console.log(`console: watching console/src → ${relative(process.cwd(), out)}`);
} else {
  const sizes = writeIndex(await build(options));
  const js = Object.entries(sizes).filter(([f]) => f.endsWith('.js')).reduce((n, [, s]) => n + s.gzip, 0);
  console.log(`console: built ${Object.keys(sizes).length} assets into ${relative(process.cwd(), out)} (${(js / 1024).toFixed(1)} KB of gzipped JavaScript)`);
}
