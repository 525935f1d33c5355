/**
 * Options of the `otel` plugin.
 *
 *   - otel                                          # listed without an endpoint: off, costs nothing
 *   - otel:
 *       endpoint: http://collector:4318/v1/traces   # OTLP/HTTP, JSON encoding
 *       service_name: gateway
 *       headers: {authorization: "Bearer ${OTEL_TOKEN}"}
 *       sample_ratio: 1                             # for traces this gateway starts; a caller's
 *                                                   # traceparent decides for its own traces
 *       flush_ms: 1000                              # export at least this often…
 *       batch_size: 512                             # …or as soon as this many spans wait
 *       max_queue: 4096                             # spans waiting beyond this are dropped
 *       timeout_ms: 10000                           # one export request
 */
export interface OtelOptions {
  endpoint?: string;
  service_name: string;
  headers: Record<string, string>;
  sample_ratio: number;
  flush_ms: number;
  batch_size: number;
  max_queue: number;
  timeout_ms: number;
}

export const otelOptionsSchema = {
  type: 'object',
  properties: {
    endpoint: { type: 'string', pattern: '^https?://', description: 'OTLP/HTTP traces endpoint (JSON), e.g. http://collector:4318/v1/traces.' },
    service_name: { type: 'string', minLength: 1, default: 'gateway' },
    headers: { type: 'object', additionalProperties: { type: 'string' }, default: {}, description: 'Headers sent with every export (authentication).' },
    sample_ratio: { type: 'number', minimum: 0, maximum: 1, default: 1 },
    flush_ms: { type: 'integer', minimum: 10, maximum: 60_000, default: 1000 },
    batch_size: { type: 'integer', minimum: 1, maximum: 10_000, default: 512 },
    max_queue: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 4096 },
    timeout_ms: { type: 'integer', minimum: 100, maximum: 120_000, default: 10_000 },
  },
  additionalProperties: false,
};
