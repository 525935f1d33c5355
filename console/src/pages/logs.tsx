/**
 * Logs (`#/logs`): the request records, newest first, filtered by time, status, model, provider,
 * workspace, API key, virtual key, config, trace id and metadata (the filters live in the hash, so
 * a filtered view is a link). By default it shows model and provider calls, not the admin API's
 * own requests (the console's included). "Follow live" adds new records as they are logged;
 * "Export" saves the selection as a file; a record opens at `#/logs/<id>`.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { link, navigate, type Route } from '../router';
import { Button, Checkbox, Empty, ErrorNote, Loading, Page, StatusBadge, Table, TextField, fmtCost, fmtMs, fmtNumber, fmtTime, useSession, type Column } from '../ui';
import { LogDetail } from './logs-detail';
import { ExportDialog } from './logs-export';
import { FilterForm, endOf, filtersOf, listQuery, showOf, startOf, type Filters, type LogPage, type LogRecord } from './logs-filters';
import './logs.css';

const PAGE_SIZE = 50;
const LIVE_MS = 2000;
/**
 * A record is dated when its request started and stored when it ended: a live poll looks this far
 * before the newest record shown, so a slow request that ends later is still picked up.
 */
const LIVE_SLACK_MS = 60_000;
/** Pages one live poll may read when many records arrived at once. */
const LIVE_PAGES = 5;

export function Logs({ route }: { route: Route }): JSX.Element {
  const query = Object.fromEntries(route.query);
  const session = useSession();
  if (route.parts[1] !== undefined) return <LogDetail id={route.parts[1]} backQuery={query} />;
  if (!session.can('logs.list')) return <LookUp />;
  return <LogList filters={filtersOf(route.query)} query={query} />;
}

/** A key that may read records but not list them: a record by its id (`x-gateway-request-id`). */
function LookUp(): JSX.Element {
  const [id, setId] = useState('');
  return (
    <Page title="Logs" description="This key may open a record by its id, but not list records (it lacks logs.list).">
      <form
        class="card row"
        onSubmit={(e) => {
          e.preventDefault();
          if (id.trim() !== '') navigate(`/logs/${id.trim()}`);
        }}
      >
        <TextField label="Record id" value={id} onInput={setId} placeholder="the x-gateway-request-id of a response" />
        <Button kind="primary" type="submit" disabled={id.trim() === ''}>
          Open
        </Button>
      </form>
    </Page>
  );
}

interface ListState {
  records: LogRecord[];
  total: number;
  exact: boolean;
  cursor: string | null;
  loading: boolean;
  error: unknown;
}

const byIdDesc = (a: LogRecord, b: LogRecord): number => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** The list of the filters: the first page, older pages on demand, newer records when following. */
function useLogList(filters: Filters, follow: boolean): ListState & { more(): void; refresh(): void; busyMore: boolean; liveError: unknown } {
  const key = JSON.stringify(filters);
  const [tick, setTick] = useState(0);
  const [state, setState] = useState<ListState>({ records: [], total: 0, exact: true, cursor: null, loading: true, error: undefined });
  const [busyMore, setBusyMore] = useState(false);
  const [liveError, setLiveError] = useState<unknown>(undefined);
  const current = useRef(state);
  current.current = state;

  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ ...s, records: [], loading: true, error: undefined }));
    api.get<LogPage>('/v1/logs', { ...listQuery(filters, Date.now()), page_size: PAGE_SIZE }, abort.signal).then(
      (page) => setState({ records: page.data, total: page.total, exact: page.total_exact, cursor: page.next_cursor, loading: false, error: undefined }),
      (error: unknown) => !abort.signal.aborted && setState((s) => ({ ...s, loading: false, error })),
    );
    return () => abort.abort();
  }, [key, tick]);

  // Following: only what is newer than the newest record shown (with the slack above), merged in.
  useEffect(() => {
    if (!follow) return;
    let stopped = false;
    let running = false;
    const poll = async (): Promise<void> => {
      if (running || document.hidden || current.current.loading) return;
      running = true;
      try {
        const shown = new Set(current.current.records.map((r) => r.id));
        const newest = current.current.records[0];
        const now = Date.now();
        const filterStart = startOf(filters, now);
        const since = newest === undefined ? undefined : new Date(Date.parse(newest.created_at) - LIVE_SLACK_MS).toISOString();
        const start = filterStart === undefined || (since !== undefined && since > filterStart) ? since : filterStart;
        const fresh: LogRecord[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < LIVE_PAGES; page++) {
          const answer = await api.get<LogPage>('/v1/logs', { ...listQuery(filters, now), start_time: start, cursor, page_size: PAGE_SIZE });
          const unseen = answer.data.filter((r) => !shown.has(r.id));
          fresh.push(...unseen);
          // A page with a record already shown reached what the list holds.
          if (unseen.length < answer.data.length || answer.next_cursor === null) break;
          cursor = answer.next_cursor;
        }
        setLiveError(undefined);
        if (stopped || fresh.length === 0) return;
        setState((s) => {
          const ids = new Set(s.records.map((r) => r.id));
          const add = fresh.filter((r) => !ids.has(r.id));
          return { ...s, records: [...add, ...s.records].sort(byIdDesc), total: s.total + add.length };
        });
      } catch (err) {
        setLiveError(err);
      } finally {
        running = false;
      }
    };
    const timer = setInterval(() => void poll(), LIVE_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [follow, key]);

  const more = (): void => {
    const cursor = current.current.cursor;
    if (cursor === null) return;
    setBusyMore(true);
    api.get<LogPage>('/v1/logs', { ...listQuery(filters, Date.now()), cursor, page_size: PAGE_SIZE }).then(
      (page) => {
        setState((s) => {
          const ids = new Set(s.records.map((r) => r.id));
          return { ...s, records: [...s.records, ...page.data.filter((r) => !ids.has(r.id))], cursor: page.next_cursor };
        });
        setBusyMore(false);
      },
      (error: unknown) => {
        setState((s) => ({ ...s, error }));
        setBusyMore(false);
      },
    );
  };
  return { ...state, more, refresh: () => setTick((n) => n + 1), busyMore, liveError };
}

function LogList({ filters, query }: { filters: Filters; query: Record<string, string> }): JSX.Element {
  const session = useSession();
  const [follow, setFollow] = useState(false);
  const [exporting, setExporting] = useState(false);
  const canFollow = endOf(filters) === undefined;
  const list = useLogList(filters, follow && canFollow);
  const filtered = Object.keys(filters).some((k) => k !== 'show');
  const columns: Array<Column<LogRecord>> = [
    {
      label: 'Time',
      render: (r) =>
        session.can('logs.view') ? (
          <a href={link(`/logs/${r.id}`, query)} aria-label={`Open the record of ${fmtTime(r.created_at)}, status ${r.status}`}>
            {fmtTime(r.created_at)}
          </a>
        ) : (
          fmtTime(r.created_at)
        ),
    },
    { label: 'Status', render: (r) => <StatusBadge status={r.status} /> },
    ...(showOf(filters) === 'calls' ? [] : [{ label: 'Call', render: (r: LogRecord) => <code>{r.method} {r.path}</code> }]),
    { label: 'Model', render: (r) => r.model ?? '—' },
    { label: 'Provider', render: (r) => r.provider ?? '—' },
    { label: 'Tokens', class: 'num', render: (r) => fmtNumber(r.usage?.total_tokens ?? null) },
    { label: 'Cost', class: 'num', render: (r) => fmtCost(r.cost_cents) },
    { label: 'Latency', class: 'num', render: (r) => fmtMs(r.latency.total_ms) },
    {
      label: 'Trace',
      render: (r) => (
        <a class="trace" href={link('/logs', { trace_id: r.trace_id, show: 'all' })} title={`Every record of trace ${r.trace_id}`}>
          {r.trace_id.length > 13 ? `${r.trace_id.slice(0, 12)}…` : r.trace_id}
        </a>
      ),
    },
  ];
  return (
    <Page
      title="Logs"
      description="Every request through the gateway: who sent it, where it went, how it ended, what it used and cost."
      actions={
        <>
          {canFollow ? <Checkbox label="Follow live" checked={follow} onChange={setFollow} /> : <span class="muted">Live needs an open-ended range</span>}
          <Button onClick={list.refresh}>Refresh</Button>
          {session.can('logs.export') && <Button onClick={() => setExporting(true)}>Export</Button>}
        </>
      }
    >
      <FilterForm filters={filters} />
      {list.liveError !== undefined && <ErrorNote error={list.liveError} />}
      {list.error !== undefined && <ErrorNote error={list.error} />}
      {list.loading ? (
        <Loading />
      ) : (
        list.error === undefined && (
          <>
            <p class="muted list-count" role="status">
              {fmtNumber(list.total)}
              {list.exact ? '' : '+'} record{list.total === 1 ? '' : 's'}
              {follow && canFollow ? ' · following live' : ''}
            </p>
            <Table
              caption="Request logs"
              columns={columns}
              rows={list.records}
              rowKey={(r) => r.id}
              empty={
                <Empty title={filtered ? 'No record matches these filters.' : 'No request logged yet.'}>
                  {filtered ? 'Widen the time range or clear a filter (Reset).' : <>Send a request through the gateway (the <a href={link('/')}>Start page</a> shows how); it appears here within a second.</>}
                </Empty>
              }
            />
            {list.cursor !== null && (
              <div class="row end">
                <Button busy={list.busyMore} onClick={list.more}>
                  Load older records
                </Button>
              </div>
            )}
          </>
        )
      )}
      {exporting && <ExportDialog filters={filters} onClose={() => setExporting(false)} />}
    </Page>
  );
}
