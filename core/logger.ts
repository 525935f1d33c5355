/**
 * A small structured logger: one JSON object per line on stderr, levels, bound fields.
 *
 * Secrets never reach the log: every field whose name looks like a credential is masked, at every
 * depth, before the line is written. Logging is for operators; request records are the logging
 * plugin's job.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const levels: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
  readonly level: LogLevel;
}

/** Field names whose values are credentials. Matched case-insensitively on the whole name. */
const SECRET_NAME = /^(authorization|proxy-authorization|api[-_]?key|x-api-key|x-gateway-api-key|x-goog-api-key|secret|password|token|access[-_]?token|secret[-_]?access[-_]?key|master[-_]?key|cookie|set-cookie)$/i;

/** Masks credential-named fields; keeps the structure so a log line still shows that a field was there. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return serializeError(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_NAME.test(k) && v !== undefined && v !== null ? '[redacted]' : redact(v, depth + 1);
  }
  return out;
}

function serializeError(err: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: err.message };
  const code = (err as { code?: unknown }).code;
  if (code !== undefined) out.code = code;
  if (err.stack) out.stack = err.stack;
  if (err.cause instanceof Error) out.cause = serializeError(err.cause);
  return out;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; defaults to stderr. Tests pass a collector. */
  write?: (line: string) => void;
}

export function createLogger(options: LoggerOptions = {}, bindings: Record<string, unknown> = {}): Logger {
  const level = options.level ?? parseLevel(process.env.GATEWAY_LOG_LEVEL);
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const threshold = levels[level];

  function emit(lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>): void {
    if (levels[lvl] < threshold) return;
    const record = { time: new Date().toISOString(), level: lvl, msg, ...bindings, ...(fields ? (redact(fields) as object) : {}) };
    write(JSON.stringify(record) + '\n');
  }

  return {
    level,
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (more) => createLogger({ level, write }, { ...bindings, ...more }),
  };
}

function parseLevel(value: string | undefined): LogLevel {
  return value !== undefined && value in levels ? (value as LogLevel) : 'info';
}
