/**
 * Child processes of a benchmark run: long-lived services (mock, bare proxy, gateway) started and
 * awaited by their ready line, and short commands (wrk, h2load) run to completion.
 *
 * Every child is registered here until it exits, so one `stopAll()` (normal end, error, SIGINT)
 * and a last synchronous SIGKILL sweep in `process.on('exit')` leave nothing behind. Only
 * children this module spawned are ever signalled, by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

const live = new Set<ChildProcess>();
let stopping = false;

/** True once a signal asked the run to stop: callers stop starting new work. */
export function isStopping(): boolean {
  return stopping;
}

/** Keep the last few KB of a stream: enough to explain a failure, bounded for long runs. */
class Tail {
  private text = '';
  constructor(private readonly limit = 8192) {}
  push(chunk: Buffer | string): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit) this.text = this.text.slice(-this.limit);
  }
  toString(): string {
    return this.text;
  }
}

function track(child: ChildProcess): void {
  // A child spawned after the stop sweep would outlive it; kill it at once instead.
  if (stopping) child.kill('SIGKILL');
  live.add(child);
  child.once('exit', () => live.delete(child));
}

export interface ServiceOptions {
  /** Shown in progress lines and errors. */
  name: string;
  command: string;
  args: readonly string[];
  /** Must capture the base URL in group 1. */
  ready: RegExp;
  /** Give up waiting for the ready line after this long. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** A started long-lived child. `pid` is the served process itself (taskset execs, not forks). */
export interface Service {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** The last output on stderr, for error messages. */
  stderrTail(): string;
}

/**
 * Spawns a service and resolves once a stdout line matches `ready`; rejects (after killing it)
 * if it exits or stays silent past the timeout.
 *
 * @example
 * const mock = await startService({ name: 'mock', command: 'node', args: ['dist/bench/mock-upstream.js', '--port', '0'], ready: /listening on (\S+)/ });
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const child = spawn(options.command, [...options.args], { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
  track(child);
  const stdout = new Tail();
  const stderr = new Tail();
  // Both pipes are drained for the child's whole life: a full pipe would block its writes.
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let lineBuffer = '';
    let ready = false;
    const timer = setTimeout(() => fail(new Error(`${options.name}: no ready line within ${options.timeoutMs ?? 15_000} ms`)), options.timeoutMs ?? 15_000);
    function fail(error: Error): void {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n--- ${options.name} stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    }
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`${options.name} exited before ready (code ${code}, signal ${signal})`)));
    child.stdout.on('data', function onData(chunk: Buffer) {
      stdout.push(chunk);
      if (ready) return;
      lineBuffer += chunk.toString();
      const match = options.ready.exec(lineBuffer);
      if (match === null) {
        if (lineBuffer.length > 65_536) lineBuffer = lineBuffer.slice(-4096);
        return;
      }
      ready = true;
      clearTimeout(timer);
      child.removeAllListeners('error');
      child.removeAllListeners('exit');
      child.once('exit', () => live.delete(child));
      resolve(match[1]!);
    });
  });
  return {
    name: options.name,
    pid: child.pid!,
    url,
    stop: (graceMs = 10_000) => stopChild(child, graceMs),
    stderrTail: () => stderr.toString(),
  };
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  // A graceful exit matters: the gateway writes its --cpu-prof file only on a clean exit.
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion and collects its output; killed after `timeoutMs` so a hung load
 * generator cannot hang the run.
 */
export async function runCommand(command: string, args: readonly string[], timeoutMs: number): Promise<CommandResult> {
  const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
  } catch (error) {
    return { code: null, stdout, stderr: `${stderr}${(error as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

/** True when the shell finds `command` on PATH. */
export async function commandExists(command: string): Promise<boolean> {
  const result = await runCommand('sh', ['-c', `command -v ${command}`], 5000);
  return result.code === 0 && result.stdout.trim().length > 0;
}

/** Stops every live child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopAll(graceMs = 10_000): Promise<void> {
  await Promise.all([...live].map((child) => stopChild(child, graceMs)));
}

/**
 * Installs the last-resort cleanup: SIGINT/SIGTERM stop the children and exit 130/143, and a
 * synchronous SIGKILL sweep on 'exit' covers every other way out (uncaught errors included).
 */
export function installCleanup(log: (line: string) => void): void {
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      stopping = true;
      log(`${signal}: stopping children`);
      // A short grace: the user asked to stop, profiles are not worth waiting for.
      void stopAll(2000).finally(() => process.exit(code));
    });
  }
}
