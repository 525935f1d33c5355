/**
 * The CLI's V8 settings (cli/v8-tuning.ts): every flag is set unless the operator's node command
 * line sets it, and the CLI applies them before any gateway module is evaluated (the first import
 * of cli/main.ts), since TurboFan reads the inlining budget whenever it compiles.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tuningFor, V8_TUNING } from '../cli/v8-tuning.js';
import { REPO } from './helpers/process.js';

t.test('every flag by default, as --name=value', async (t) => {
  t.same(tuningFor([]), V8_TUNING);
  t.ok(V8_TUNING.length > 0);
  for (const flag of V8_TUNING) t.match(flag, /^--[a-z-]+=\d+$/);
  // Unrelated node flags change nothing.
  t.same(tuningFor(['--enable-source-maps', '--max-old-space-size=512']), V8_TUNING);
});

t.test("an operator's own value wins", async (t) => {
  t.same(tuningFor(['--max-inlined-bytecode-size=100']), ['--max-inlined-bytecode-size-cumulative=3000']);
  t.same(tuningFor(['--max_inlined_bytecode_size_cumulative=500']), ['--max-inlined-bytecode-size=920']);
  t.same(tuningFor(['--max-inlined-bytecode-size=100', '--max-inlined-bytecode-size-cumulative=500']), []);
  // A longer flag sharing the prefix is another flag.
  t.same(tuningFor(['--max-inlined-bytecode-size-absolute=9000']), V8_TUNING);
});

t.test('the CLI applies the settings before any other module', async (t) => {
  const source = readFileSync(join(REPO, 'cli/main.ts'), 'utf8');
  const imports = [...source.matchAll(/^import .*$/gm)].map((m) => m[0]);
  t.equal(imports[0], "import './v8-tuning.js';");
});
