/**
 * One log record (`#/logs/<id>`, `GET /v1/logs/:id`): every field, grouped (the request and its
 * outcome, routing, who sent it, its trace, usage and cost, latency), its metadata and guardrail
 * results, and the request and response bodies when the logging plugin keeps them. Fields this
 * page does not know yet still show, under "Other fields".
 */
import type { ComponentChildren, JSX } from 'preact';
import { api } from '../api';
import { link } from '../router';
import { Badge, Json, Loaded, Page, Section, StatusBadge, fmtCost, fmtMs, fmtNumber, fmtTime, useLoad } from '../ui';
import type { LogRecord } from './logs-filters';

type Fact = [label: string, value: ComponentChildren];

const text = (v: string | null | undefined): ComponentChildren => (v === null || v === undefined || v === '' ? <span class="muted">—</span> : v);
const code = (v: string | null | undefined): ComponentChildren => (v === null || v === undefined || v === '' ? <span class="muted">—</span> : <code>{v}</code>);
const yesNo = (v: boolean): string => (v ? 'yes' : 'no');

/** The fields each group shows; whatever is left goes under "Other fields". */
const SHOWN = new Set([
  'id', 'created_at', 'method', 'path', 'route', 'status', 'is_success', 'source', 'error_code', 'error_detail', 'aborted', 'stream', 'cache_status', 'cache_wait_ms',
  'retry_count', 'last_used_option_index', 'provider', 'model', 'priced_as', 'config', 'virtual_key', 'organisation_id', 'workspace_id', 'api_key_id', 'trace_id',
  'span_id', 'parent_span_id', 'span_name', 'usage', 'cost_cents', 'latency', 'metadata', 'guardrails', 'request_body', 'response_body',
]);

function Facts({ facts }: { facts: Fact[] }): JSX.Element {
  return (
    <dl class="facts">
      {facts.map(([label, value]) => [<dt key={`${label}-t`}>{label}</dt>, <dd key={`${label}-d`}>{value}</dd>])}
    </dl>
  );
}

/** A stored body: pretty JSON when it parses, else the text as stored. */
function Body({ title, body }: { title: string; body: string | null | undefined }): JSX.Element {
  let shown: ComponentChildren;
  if (body === null || body === undefined) {
    shown = <p class="muted">Not stored. Bodies are kept only when the logging plugin's <code>bodies.enabled</code> is on.</p>;
  } else {
    let pretty = body;
    try {
      pretty = JSON.stringify(JSON.parse(body), null, 2);
    } catch {
      // Not JSON (cut at max_bytes, or a stream's events): shown as stored.
    }
    shown = <pre class="json" tabIndex={0} aria-label={title}>{pretty}</pre>;
  }
  return <Section title={title}>{shown}</Section>;
}

export function LogDetail({ id, backQuery }: { id: string; backQuery: Record<string, string> }): JSX.Element {
  const record = useLoad((signal) => api.get<LogRecord>(`/v1/logs/${encodeURIComponent(id)}`, undefined, signal), [id]);
  return (
    <Page
      title="Log record"
      description={<code>{id}</code>}
      actions={
        <>
          <a class="btn btn-plain" href={link('/logs', backQuery)}>
            Back to the list
          </a>
          {record.data !== undefined && (
            <a class="btn btn-plain" href={link('/logs', { trace_id: record.data.trace_id, show: 'all' })}>
              Every record of this trace
            </a>
          )}
        </>
      }
    >
      <Loaded state={record}>{(r) => <RecordView r={r} />}</Loaded>
    </Page>
  );
}

function RecordView({ r }: { r: LogRecord }): JSX.Element {
  const u = r.usage;
  const other = Object.entries(r).filter(([k]) => !SHOWN.has(k));
  return (
    <>
      <div class="grid">
        <Section title="Request">
          <Facts
            facts={[
              ['Time', fmtTime(r.created_at)],
              ['Status', <span key="s"><StatusBadge status={r.status} /> {r.is_success ? <Badge tone="ok">success</Badge> : <Badge tone="bad">failed</Badge>}</span>],
              ['Call', <code key="c">{r.method} {r.path}</code>],
              ['Route', r.route],
              ['Answered by', r.source],
              ['Error code', code(r.error_code)],
              ['Error detail', text(r.error_detail)],
              ['Stream', yesNo(r.stream)],
              ['Aborted', yesNo(r.aborted)],
              ['Cache', r.cache_status],
              ['Cache wait', r.cache_wait_ms === null || r.cache_wait_ms === undefined ? text(null) : fmtMs(r.cache_wait_ms)],
              ['Retries', fmtNumber(r.retry_count)],
              ['Option used', code(r.last_used_option_index)],
            ]}
          />
        </Section>
        <Section title="Routing and identity">
          <Facts
            facts={[
              ['Provider', text(r.provider)],
              ['Model', text(r.model)],
              ['Priced as', text(r.priced_as)],
              ['Config', code(r.config)],
              ['Virtual key', code(r.virtual_key)],
              ['Organisation', code(r.organisation_id)],
              ['Workspace', code(r.workspace_id)],
              ['API key', code(r.api_key_id)],
              ['Trace id', code(r.trace_id)],
              ['Span id', code(r.span_id)],
              ['Parent span', code(r.parent_span_id)],
              ['Span name', text(r.span_name)],
            ]}
          />
        </Section>
        <Section title="Usage, cost and latency">
          <Facts
            facts={[
              ['Prompt tokens', fmtNumber(u?.prompt_tokens)],
              ['Completion tokens', fmtNumber(u?.completion_tokens)],
              ['Total tokens', fmtNumber(u?.total_tokens)],
              ['Cached tokens', fmtNumber(u?.cached_tokens)],
              ['Reasoning tokens', fmtNumber(u?.reasoning_tokens)],
              ['Usage source', text(u?.source)],
              ['Cost', fmtCost(r.cost_cents)],
              ['Latency', fmtMs(r.latency.total_ms)],
              ['Upstream', fmtMs(r.latency.upstream_ms)],
              ['Gateway', fmtMs(r.latency.gateway_ms)],
              ['First byte', fmtMs(r.latency.ttfb_ms)],
            ]}
          />
        </Section>
        <Section title="Metadata">
          {Object.keys(r.metadata).length === 0 ? <p class="muted">None. Clients attach it with the x-gateway-metadata header.</p> : <Json value={r.metadata} />}
        </Section>
      </div>
      {r.guardrails !== undefined && r.guardrails !== null && (
        <Section title={`Guardrails: ${r.guardrails.verdict}`}>
          <Facts facts={[['Passed', fmtNumber(r.guardrails.passed)], ['Failed', fmtNumber(r.guardrails.failed)], ['Redacted', fmtNumber(r.guardrails.redacted)]]} />
          <Json value={r.guardrails.results} />
        </Section>
      )}
      <Body title="Request body" body={r.request_body} />
      <Body title="Response body" body={r.response_body} />
      {other.length > 0 && (
        <Section title="Other fields">
          <Json value={Object.fromEntries(other)} />
        </Section>
      )}
      <details class="card raw">
        <summary>The whole record as JSON</summary>
        <Json value={r} />
      </details>
    </>
  );
}
