/**
 * The gateway's configuration after loading: YAML read, `${ENV}` interpolated, env overrides
 * applied, validated against `config/gateway.schema.json`, defaults filled and units resolved
 * (sizes in bytes, durations in ms). The YAML keys are snake_case and so are these.
 */

export interface TlsConfig {
  /** PEM certificate chain file path (resolved against the YAML file's directory). */
  cert: string;
  /** PEM private key file path. */
  key: string;
}

export interface ServerConfig {
  host: string; // default 0.0.0.0
  port: number; // default 8787
  /** Maximum request body in bytes; YAML accepts `10mb`, `512kb`, or a number of bytes. Default 10 MiB. */
  body_limit: number;
  /** Maximum body of an admin API request in bytes (never more than `body_limit`). Default 1 MiB. */
  admin_body_limit: number;
  /** Worker processes sharing the data dir (later issues). Default 1. */
  workers: number;
  tls?: TlsConfig;
  /** Idle keep-alive timeout for client connections (ms). Default 65000. */
  keep_alive_timeout: number;
  /** Time allowed for a client to send all request headers (ms). Default 30000. */
  headers_timeout: number;
  /** Time allowed for a client to send the whole request (ms). Default 300000. */
  request_timeout: number;
  /** Maximum size of request headers in bytes. Default 16384. */
  max_header_size: number;
  /** Grace period for in-flight requests and streams on SIGTERM/SIGINT (ms). Default 30000. */
  shutdown_grace: number;
  /** Interval of SSE `: ping` comments while a stream is silent, before its first upstream byte and after (ms); 0 = off. Default 10000. */
  stream_ping_interval: number;
}

export interface StoreConfig {
  path: string; // default ./data, resolved against the process cwd
  /** The most data the store may hold, in bytes; enforced by the gateway (LMDB grows on demand). Default 16 GiB. */
  map_size: number;
  /** Distributed mode's control plane (with `redis`); null on the embedded default. */
  postgres: PostgresConfig | null;
  /** Distributed mode's shared hot state (with `postgres`); null on the embedded default. */
  redis: RedisConfig | null;
}

/** What a gateway does with a kind of counter while Valkey/Redis is unreachable. */
export type FaultMode = 'fail_open' | 'fail_closed';

export interface PostgresConfig {
  /** `postgres://user:password@host:port/database` (GATEWAY_POSTGRES_URL overrides). */
  url: string;
  /** Connections per gateway process. Default 10. */
  pool: number;
  /** Log records held in memory while PostgreSQL is unreachable; past it they are dropped and counted. Default 100,000. */
  log_queue: number;
}

export interface RedisConfig {
  /** `redis://[:password@]host:port[/db]` or `rediss://…` (GATEWAY_REDIS_URL overrides). */
  url: string;
  /** Prefix of every key the gateway writes, so one Valkey can serve several gateways. Default `gw:`. */
  key_prefix: string;
  /** How long a command may take before it counts as a fault (ms). Default 1000. */
  command_timeout: number;
  /** Rate limits while Valkey is unreachable: serve and count locally (default), or 503. */
  rate_limits: FaultMode;
  /** Budgets while Valkey is unreachable: 503 (default), or serve and count locally. */
  budgets: FaultMode;
}

export interface AuditConfig {
  /** The most bytes of a request body (and, separately, of its query) an audit record keeps. Default 8 KiB. */
  summary_bytes: number;
  /** Records older than this are swept. Default 90. */
  retention_days: number;
  /** Past this many records the oldest are swept. Default 1,000,000. */
  max_records: number;
}

export interface SecurityConfig {
  custom_hosts: {
    /** Hostnames or IP literals allowed even when they fall in a private range. Default: loopback names. */
    allow: string[];
    /** Allow loopback targets (local model servers). Default true. */
    allow_loopback: boolean;
  };
}

export interface UpstreamConfig {
  /** Max connections per upstream origin. Default 128. */
  connections: number;
  /** Idle time before an upstream keep-alive socket is closed (ms). Default 60000. */
  keep_alive_timeout: number;
  /** TCP/TLS connect timeout (ms). Default 10000. */
  connect_timeout: number;
  /** Default per-attempt timeout for an upstream answer (ms), overridden by config `request_timeout`
   *  and `x-gateway-request-timeout`. Default 600000 (10 min, long generations). */
  request_timeout: number;
  /** A stream under way whose upstream sends nothing for this long ends with an `upstream_idle_timeout`
   *  error event and the upstream call is closed (ms); 0 = off. Default 300000 (5 min). */
  stream_idle_timeout: number;
}

/** One pipeline entry: a plugin name (standard plugin or a path starting with `.` or `/`) and its options. */
export interface PipelineEntry {
  name: string;
  options: Record<string, unknown>;
  /** Where the entry sits in the YAML, for error messages: `pipeline[3]`. */
  path: string;
}

export interface GatewayConfig {
  server: ServerConfig;
  store: StoreConfig;
  audit: AuditConfig;
  security: SecurityConfig;
  upstream: UpstreamConfig;
  pipeline: PipelineEntry[];
  /** The file the config came from (absolute), or `<inline>`. */
  file: string;
  /** The directory relative plugin paths and TLS files resolve against. */
  baseDir: string;
}

/** A problem found while loading a config: where it is and what is wrong. */
export interface ConfigProblem {
  file: string;
  line: number; // 1-based; 0 when unknown
  column: number; // 1-based; 0 when unknown
  /** The key path, dotted with indexes: `server.port`, `pipeline[2].cache.max_entries`. */
  path: string;
  message: string;
}

/**
 * Maps a key path (as segments) to its YAML position; used to report plugin option errors.
 * With `{key: true}` it points at the last segment's key rather than its value (unknown keys).
 */
export type Locator = (segments: ReadonlyArray<string | number>, options?: { key?: boolean }) => { line: number; column: number };
