/**
 * One temporary directory per run (Lua scripts, h2load body, gateway config, store, profile),
 * removed when the process exits, whatever the way out.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root: string | undefined;

/** A fresh subdirectory `name` of this run's temp dir. */
export function runTempDir(name: string): string {
  if (root === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
    root = dir;
    // Sync on purpose: 'exit' handlers cannot wait. Children are dead by then (processes.ts).
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
