/**
 * The Logs filters: what the hash query holds (`#/logs?status=429&show=all`), how it becomes a
 * `GET /v1/logs` query and a log export's filters, and the form that edits it. A filtered view is
 * a link: the form only writes the hash, and the list reads it.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Query } from '../api';
import { navigate } from '../router';
import { Button, SelectField, TextField, useSession } from '../ui';
import { useWorkspaces } from './api-keys';

/** One request log as `GET /v1/logs` answers it (plugins/logging/views.ts). */
export interface LogRecord {
  id: string;
  created_at: string;
  trace_id: string;
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  organisation_id: string | null;
  workspace_id: string | null;
  api_key_id: string | null;
  virtual_key: string | null;
  metadata: Record<string, string>;
  method: string;
  path: string;
  route: string;
  provider: string | null;
  model: string | null;
  config: string | null;
  last_used_option_index: string;
  retry_count: number;
  cache_status: string;
  cache_wait_ms?: number | null;
  guardrails?: { verdict: string; passed: number; failed: number; redacted: number; results: unknown } | null;
  stream: boolean;
  status: number;
  is_success: boolean;
  source: string;
  error_code: string | null;
  error_detail?: string | null;
  aborted: boolean;
  latency: { total_ms: number; upstream_ms: number; gateway_ms: number; ttfb_ms: number | null };
  usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number; cached_tokens?: number; reasoning_tokens?: number; source?: string } | null;
  cost_cents: number;
  priced_as: string | null;
  request_body?: string | null;
  response_body?: string | null;
}

export interface LogPage {
  object: 'list';
  total: number;
  total_exact: boolean;
  has_more: boolean;
  next_cursor: string | null;
  data: LogRecord[];
}

export const TIME_RANGES: Record<string, { label: string; ms: number }> = {
  '15m': { label: 'Last 15 minutes', ms: 15 * 60_000 },
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
};

/** The routes analytics counts too: model calls and pass-through calls to providers. */
export const CALL_ROUTES = 'chat.completions,completions,embeddings,moderations,responses,messages,messages.count_tokens,passthrough';

/** Which requests the list shows: the admin API's own calls (the console's included) are logged too. */
export const SHOW: Record<string, { label: string; route: string | undefined }> = {
  calls: { label: 'Model & provider calls', route: CALL_ROUTES },
  admin: { label: 'Admin API calls', route: 'plugin' },
  all: { label: 'Every request', route: undefined },
};

/** The filter fields, as the hash query names them (the list API's names where it has one). */
export const TEXT_FILTERS = ['status', 'model', 'provider', 'api_key_id', 'virtual_key', 'config', 'trace_id', 'metadata'] as const;
export const FILTER_KEYS = ['range', 'from', 'to', 'show', 'workspace_id', ...TEXT_FILTERS] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type Filters = Partial<Record<FilterKey, string>>;

export function filtersOf(query: URLSearchParams): Filters {
  const f: Filters = {};
  for (const k of FILTER_KEYS) {
    const v = query.get(k);
    if (v !== null && v !== '') f[k] = v;
  }
  return f;
}

export const showOf = (f: Filters): string => (f.show !== undefined && f.show in SHOW ? f.show : 'calls');

/** The start of the window (ISO), from a preset (relative to `now`) or a custom start. */
export function startOf(f: Filters, now: number): string | undefined {
  if (f.range === 'custom') return f.from;
  const preset = f.range === undefined ? undefined : TIME_RANGES[f.range];
  return preset === undefined ? undefined : new Date(now - preset.ms).toISOString();
}

export const endOf = (f: Filters): string | undefined => (f.range === 'custom' ? f.to : undefined);

/** `GET /v1/logs` query of the filters (without paging). */
export function listQuery(f: Filters, now: number): Query {
  return {
    start_time: startOf(f, now),
    end_time: endOf(f),
    route: SHOW[showOf(f)]!.route,
    workspace_id: f.workspace_id,
    status: f.status,
    model: f.model,
    provider: f.provider,
    api_key_id: f.api_key_id,
    virtual_key: f.virtual_key,
    config: f.config,
    trace_id: f.trace_id,
    metadata: f.metadata,
  };
}

/** A log export's `filters` (ExportFilters) for the same records. */
export function exportFilters(f: Filters, now: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    time_of_generation_min: startOf(f, now),
    time_of_generation_max: endOf(f),
    route: SHOW[showOf(f)]!.route,
    status_code: f.status,
    ai_model: f.model,
    provider: f.provider,
    api_key_id: f.api_key_id,
    virtual_keys: f.virtual_key,
    configs: f.config,
    trace_id: f.trace_id,
    metadata: f.metadata === undefined ? undefined : (JSON.parse(f.metadata) as unknown),
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/** What is wrong with a filter value, or undefined. */
export function filterProblem(key: FilterKey, value: string): string | undefined {
  if (value.trim() === '') return undefined;
  if (key === 'status' && !/^\s*\d{3}\s*(,\s*\d{3}\s*)*$/.test(value)) return 'HTTP statuses, comma separated: 429 or 500,502';
  if (key === 'metadata') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'A JSON object, e.g. {"env":"prod"}';
    } catch {
      return 'Not JSON: a JSON object, e.g. {"env":"prod"}';
    }
  }
  return undefined;
}

/** ISO ⇄ the local time of a datetime-local input. */
const toLocalInput = (iso: string | undefined): string => {
  if (iso === undefined) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (v: string): string | undefined => (v === '' ? undefined : new Date(v).toISOString());

const LABELS: Record<(typeof TEXT_FILTERS)[number], [label: string, placeholder: string]> = {
  status: ['Status', '429 or 500,502'],
  model: ['Model', 'gpt-4o'],
  provider: ['Provider', 'openai'],
  api_key_id: ['API key id', 'key id'],
  virtual_key: ['Virtual key', 'slug'],
  config: ['Config', 'slug or id'],
  trace_id: ['Trace id', 'trace id'],
  metadata: ['Metadata', '{"env":"prod"}'],
};

/** Always shown; the rest fold away under "More filters" on a phone. */
const PRIMARY = ['status', 'model', 'provider'] as const;
const MORE = ['api_key_id', 'virtual_key', 'config', 'trace_id', 'metadata'] as const;

/** The filter form: edits a draft, writes it to the hash on Apply. */
export function FilterForm({ filters }: { filters: Filters }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [draft, setDraft] = useState<Filters>(filters);
  const key = JSON.stringify(filters);
  // Filters changed from outside (a link, Reset, back): the form follows. Not on mount, where it
  // would undo what was typed before the effect ran.
  const applied = useRef(key);
  useEffect(() => {
    if (applied.current === key) return;
    applied.current = key;
    setDraft(filters);
  }, [key]);
  const set = (k: FilterKey, v: string | undefined): void => setDraft((d) => ({ ...d, [k]: v === '' ? undefined : v }));
  const field = (k: (typeof TEXT_FILTERS)[number]): JSX.Element => (
    <div class={`filter-${k}`} key={k}>
      <TextField label={LABELS[k][0]} value={draft[k] ?? ''} placeholder={LABELS[k][1]} onInput={(v) => set(k, v)} hint={filterProblem(k, draft[k] ?? '')} />
    </div>
  );
  const moreSet = MORE.filter((k) => filters[k] !== undefined).length;
  // Open on a wide screen, or when one of them is set; folded on a phone otherwise.
  const moreOpen = moreSet > 0 || matchMedia('(min-width: 761px)').matches;
  const problems = TEXT_FILTERS.map((k) => [k, filterProblem(k, draft[k] ?? '')] as const).filter(([, p]) => p !== undefined);
  const apply = (e: Event): void => {
    e.preventDefault();
    if (problems.length > 0) return;
    const query: Record<string, string | undefined> = {};
    for (const k of FILTER_KEYS) query[k] = draft[k]?.trim() || undefined;
    if (query.range !== 'custom') query.from = query.to = undefined;
    navigate('/logs', query);
  };
  return (
    <form class="card log-filters" onSubmit={apply} aria-label="Log filters">
      <div class="filters">
        <SelectField
          label="Time"
          value={draft.range ?? ''}
          onChange={(v) => set('range', v)}
          options={[['', 'Any time'], ...Object.entries(TIME_RANGES).map(([k, r]): [string, string] => [k, r.label]), ['custom', 'Custom range…']]}
        />
        {draft.range === 'custom' && (
          <>
            <TextField label="From" type="datetime-local" value={toLocalInput(draft.from)} onInput={(v) => set('from', fromLocalInput(v))} />
            <TextField label="To" type="datetime-local" value={toLocalInput(draft.to)} onInput={(v) => set('to', fromLocalInput(v))} />
          </>
        )}
        <SelectField label="Show" value={showOf(draft)} onChange={(v) => set('show', v === 'calls' ? undefined : v)} options={Object.entries(SHOW).map(([k, s]): [string, string] => [k, s.label])} />
        {session.isOrganisation && workspaces.list.length > 0 && (
          <SelectField
            label="Workspace"
            value={draft.workspace_id ?? ''}
            onChange={(v) => set('workspace_id', v)}
            options={[['', 'All workspaces'], ...workspaces.list.map((w): [string, string] => [w.id, w.slug])]}
          />
        )}
        {PRIMARY.map(field)}
      </div>
      <details class="more-filters" open={moreOpen}>
        <summary>More filters{moreSet > 0 ? ` (${moreSet} set)` : ''}</summary>
        <div class="filters">{MORE.map(field)}</div>
      </details>
      <div class="row">
        <Button kind="primary" type="submit" disabled={problems.length > 0}>
          Apply filters
        </Button>
        <Button onClick={() => navigate('/logs', {})}>Reset</Button>
        {problems.length > 0 && (
          <span class="error-text" role="alert">
            Fix {problems.map(([k]) => LABELS[k][0]).join(', ')} first.
          </span>
        )}
      </div>
    </form>
  );
}
