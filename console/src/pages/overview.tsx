/**
 * Overview: the gateway's traffic over a chosen range (last hour, day, week or month), from the
 * analytics API: totals as tiles (requests, error rate, latency percentiles, tokens, cost), the
 * same as charts over time, and the top models, providers, API keys and workspaces. The range
 * lives in the hash (`#/overview?range=7d`), so a view is a link.
 */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import { api } from '../api';
import { link, navigate, type Route } from '../router';
import { Button, Empty, Loaded, Loading, Page, SelectField, fmtCost, fmtMs, fmtNumber, fmtPct, useLoad } from '../ui';
import { Chart, type ChartSeries } from './overview-chart';
import { TopTables } from './overview-tables';
import './overview.css';

export const RANGES = {
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
} as const;

export type RangeKey = keyof typeof RANGES;

/** The analytics routes' required window, as ISO times. */
export interface Window {
  time_of_generation_min: string;
  time_of_generation_max: string;
}

interface Point {
  timestamp: string;
  [field: string]: unknown;
}

interface Graph<S> {
  summary: S;
  data_points: Point[];
}

interface Graphs {
  requests: Graph<{ total: number }>;
  errors: Graph<{ total: number }>;
  errorRate: Graph<{ rate: number }>;
  latency: Graph<{ avg: number; p50: number; p90: number; p95: number; p99: number }>;
  tokens: Graph<{ total: number; avg: number }>;
  cost: Graph<{ total: number; avg: number }>;
}

const rangeOf = (v: string | null): RangeKey => (v !== null && v in RANGES ? (v as RangeKey) : '24h');

async function loadGraphs(period: Window, signal: AbortSignal): Promise<Graphs> {
  const get = <S,>(name: string): Promise<Graph<S>> => api.get<Graph<S>>(`/v1/analytics/graphs/${name}`, { ...period }, signal);
  const [requests, errors, errorRate, latency, tokens, cost] = await Promise.all([
    get<{ total: number }>('requests'),
    get<{ total: number }>('errors'),
    get<{ rate: number }>('errors/rate'),
    get<Graphs['latency']['summary']>('latency'),
    get<Graphs['tokens']['summary']>('tokens'),
    get<Graphs['cost']['summary']>('cost'),
  ]);
  return { requests, errors, errorRate, latency, tokens, cost };
}

export function Overview({ route }: { route: Route }): JSX.Element {
  const range = rangeOf(route.query.get('range'));
  // A new window on each range change or refresh; the charts and the tables share it.
  const period = useLoad(async () => {
    const now = Date.now();
    return { time_of_generation_min: new Date(now - RANGES[range].ms).toISOString(), time_of_generation_max: new Date(now).toISOString() };
  }, [range]);
  return (
    <Page
      title="Overview"
      description="Requests, errors, latency, tokens and cost of the model calls through this gateway."
      actions={
        <div class="range-pick">
          <SelectField
            label="Range"
            value={range}
            onChange={(v) => navigate('/overview', { range: v }, true)}
            options={Object.entries(RANGES).map(([k, r]): [string, string] => [k, r.label])}
          />
          <Button onClick={period.reload}>Refresh</Button>
        </div>
      }
    >
      {period.data === undefined ? <Loading /> : <Dashboard period={period.data} />}
    </Page>
  );
}

function Dashboard({ period }: { period: Window }): JSX.Element {
  const graphs = useLoad((signal) => loadGraphs(period, signal), [period]);
  return (
    <Loaded state={graphs}>
      {(g) =>
        g.requests.summary.total === 0 ? (
          <Empty title="No traffic in this range.">
            Send a request through the gateway (the <a href={link('/')}>Start page</a> shows how), or pick a longer range.
          </Empty>
        ) : (
          <>
            <Tiles g={g} />
            <Charts g={g} />
            <TopTables period={period} />
          </>
        )
      }
    </Loaded>
  );
}

function Tiles({ g }: { g: Graphs }): JSX.Element {
  const l = g.latency.summary;
  const tiles: Array<[label: string, value: string, note?: string]> = [
    ['Requests', fmtNumber(g.requests.summary.total)],
    ['Error rate', fmtPct(g.errorRate.summary.rate), `${fmtNumber(g.errors.summary.total)} error${g.errors.summary.total === 1 ? '' : 's'}`],
    ['Latency p50', fmtMs(l.p50), `mean ${fmtMs(l.avg)}`],
    ['Latency p95 / p99', `${fmtMs(l.p95)} / ${fmtMs(l.p99)}`],
    ['Tokens', fmtNumber(g.tokens.summary.total), `${fmtNumber(g.tokens.summary.avg)} per request`],
    ['Cost', fmtCost(g.cost.summary.total), `${fmtCost(g.cost.summary.avg)} per request`],
  ];
  return (
    <ul class="tiles" aria-label="Totals">
      {tiles.map(([label, value, note]) => (
        <li class="tile" key={label}>
          <span class="tile-label">{label}</span>
          <strong class="tile-value">{value}</strong>
          {note !== undefined && <span class="muted tile-note">{note}</span>}
        </li>
      ))}
    </ul>
  );
}

const num = (p: Point, field: string): number | null => (typeof p[field] === 'number' ? (p[field] as number) : null);
const times = (points: Point[]): number[] => points.map((p) => Date.parse(p.timestamp) / 1000);
const line = (points: Point[], field: string, label: string, color: string): ChartSeries => ({ label, color, values: points.map((p) => num(p, field)) });

/** A measure of requests (latency, error rate) is no value, not 0, where there were no requests. */
function whereTraffic(series: ChartSeries, requests: Point[]): ChartSeries {
  const idle = new Set(requests.filter((p) => num(p, 'total') === 0).map((p) => p.timestamp));
  return { ...series, values: series.values.map((v, i) => (idle.has(requests[i]?.timestamp ?? '') ? null : v)) };
}

const BLUE = '#2f5bd3';
const RED = '#b42318';
const GREEN = '#1f7a4d';
const AMBER = '#9a5b00';

function Charts({ g }: { g: Graphs }): JSX.Element {
  // Stable arrays per answer: the charts redraw only when the data changes.
  const charts = useMemo(
    () => [
      { title: 'Requests', times: times(g.requests.data_points), series: [line(g.requests.data_points, 'total', 'Requests', BLUE)], format: fmtNumber, summary: `${fmtNumber(g.requests.summary.total)} in the range` },
      { title: 'Error rate', times: times(g.errorRate.data_points), series: [whereTraffic(line(g.errorRate.data_points, 'rate', 'Error rate', RED), g.requests.data_points)], format: fmtPct, summary: `${fmtPct(g.errorRate.summary.rate)} over the range` },
      {
        title: 'Latency',
        times: times(g.latency.data_points),
        series: [line(g.latency.data_points, 'p50', 'p50', BLUE), line(g.latency.data_points, 'p95', 'p95', AMBER), line(g.latency.data_points, 'p99', 'p99', RED)].map((s) =>
          whereTraffic(s, g.requests.data_points),
        ),
        format: fmtMs,
        summary: `p50 ${fmtMs(g.latency.summary.p50)}, p95 ${fmtMs(g.latency.summary.p95)}, p99 ${fmtMs(g.latency.summary.p99)}`,
      },
      { title: 'Tokens', times: times(g.tokens.data_points), series: [line(g.tokens.data_points, 'total', 'Tokens', GREEN)], format: fmtNumber, summary: `${fmtNumber(g.tokens.summary.total)} in the range` },
      { title: 'Cost', times: times(g.cost.data_points), series: [line(g.cost.data_points, 'total', 'Cost', AMBER)], format: fmtCost, summary: `${fmtCost(g.cost.summary.total)} in the range` },
    ],
    [g],
  );
  return (
    <div class="charts">
      {charts.map((c) => (
        <Chart key={c.title} {...c} />
      ))}
    </div>
  );
}

