/**
 * The OTLP/HTTP JSON encoding of traces, written out here rather than pulled in from the
 * OpenTelemetry SDK: one request shape, a few field types.
 *
 *   ExportTraceServiceRequest
 *     └ resourceSpans[]: { resource: { attributes }, scopeSpans[]: { scope, spans[] } }
 *
 * JSON specifics (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): field names
 * in lowerCamelCase; trace and span ids as hex strings (not base64, unlike plain protobuf JSON);
 * enums as integers; 64-bit integers (times, int attributes) as decimal strings.
 */

export type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

export interface KeyValue {
  key: string;
  value: AnyValue;
}

/** `SpanKind` values. The gateway's span serves a request. */
export const SPAN_KIND_SERVER = 2;

/** `StatusCode` values. */
export const STATUS_UNSET = 0;
export const STATUS_ERROR = 2;

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: KeyValue[];
  status: { code: number; message?: string };
}

/** Attributes from a plain record; undefined and null values are left out. */
export function attributes(values: Record<string, string | number | boolean | null | undefined>): KeyValue[] {
  const out: KeyValue[] = [];
  for (const [key, v] of Object.entries(values)) {
    if (v === undefined || v === null) continue;
    if (typeof v === 'string') out.push({ key, value: { stringValue: v } });
    else if (typeof v === 'boolean') out.push({ key, value: { boolValue: v } });
    else if (Number.isInteger(v)) out.push({ key, value: { intValue: String(v) } });
    else out.push({ key, value: { doubleValue: v } });
  }
  return out;
}

/** Milliseconds since the epoch (fractional) as OTLP's nanoseconds string, to the microsecond. */
export function unixNano(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}

/** The body of one export POST. */
export function exportRequest(resource: KeyValue[], scope: { name: string; version: string }, spans: ReadonlyArray<OtlpSpan>): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope, spans }] }] });
}
