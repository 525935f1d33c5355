/**
 * The Overview's top tables: the models, providers, API keys and workspaces with the most
 * requests in the range (`GET /v1/analytics/groups/…`). Each name links to its records in Logs.
 * A gateway whose analytics API lacks a group says so in place of that table.
 */
import type { ComponentChildren, JSX } from 'preact';
import { api, ApiError, type ListPage } from '../api';
import { link } from '../router';
import { Empty, ErrorNote, Loading, Section, Table, fmtCost, fmtNumber, fmtTime, useLoad, useSession, type Column } from '../ui';
import type { Window } from './overview';

interface Traffic {
  requests: number;
  errors: number;
  cost: number;
  total_tokens: number;
  last_seen: string;
}

interface ModelRow {
  ai_model: string;
  requests: string;
}

type ProviderRow = Traffic & { provider: string };
type KeyRow = Traffic & { api_key_id: string; api_key_name: string | null };
type WorkspaceRow = Traffic & { workspace_id: string; workspace_slug: string | null };

const TOP = 5;

/** The counts every traffic group has, after its name column. */
function trafficColumns<T extends Traffic>(): Array<Column<T>> {
  return [
    { label: 'Requests', class: 'num', render: (r) => fmtNumber(r.requests) },
    { label: 'Errors', class: 'num', render: (r) => fmtNumber(r.errors) },
    { label: 'Tokens', class: 'num', render: (r) => fmtNumber(r.total_tokens) },
    { label: 'Cost', class: 'num', render: (r) => fmtCost(r.cost) },
    { label: 'Last seen', render: (r) => fmtTime(r.last_seen) },
  ];
}

function TopTable<T>(props: { title: string; group: string; period: Window; columns: Array<Column<T>>; rowKey: (r: T) => string }): JSX.Element {
  const rows = useLoad((signal) => api.get<ListPage<T>>(`/v1/analytics/groups/${props.group}`, { ...props.period, page_size: TOP }, signal), [props.period, props.group]);
  let body: ComponentChildren;
  if (rows.error instanceof ApiError && rows.error.status === 404) {
    body = <Empty title="Not available on this gateway.">Its analytics API has no {props.title.toLowerCase()} breakdown (GET /v1/analytics/groups/{props.group}).</Empty>;
  } else if (rows.error !== undefined) {
    body = <ErrorNote error={rows.error} />;
  } else if (rows.data === undefined) {
    body = <Loading />;
  } else {
    body = <Table caption={props.title} columns={props.columns} rows={rows.data.data} rowKey={props.rowKey} empty={<Empty title="Nothing in this range." />} />;
  }
  return <Section title={props.title}>{body}</Section>;
}

export function TopTables({ period }: { period: Window }): JSX.Element {
  const session = useSession();
  // Names link to their records when the key may list logs.
  const toLogs = (label: string, query: Record<string, string>): ComponentChildren => (session.can('logs.list') ? <a href={link('/logs', query)}>{label}</a> : label);
  return (
    <div class="grid top-tables">
      <TopTable<ModelRow>
        title="Top models"
        group="ai-models"
        period={period}
        rowKey={(r) => r.ai_model}
        columns={[
          { label: 'Model', render: (r) => toLogs(r.ai_model, { model: r.ai_model }) },
          { label: 'Requests', class: 'num', render: (r) => fmtNumber(Number(r.requests)) },
        ]}
      />
      <TopTable<ProviderRow>
        title="Top providers"
        group="providers"
        period={period}
        rowKey={(r) => r.provider}
        columns={[{ label: 'Provider', render: (r) => toLogs(r.provider, { provider: r.provider }) }, ...trafficColumns<ProviderRow>()]}
      />
      <TopTable<KeyRow>
        title="Top API keys"
        group="api-keys"
        period={period}
        rowKey={(r) => r.api_key_id}
        columns={[{ label: 'API key', render: (r) => toLogs(r.api_key_name ?? r.api_key_id, { api_key_id: r.api_key_id }) }, ...trafficColumns<KeyRow>()]}
      />
      {session.isOrganisation && (
        <TopTable<WorkspaceRow>
          title="Top workspaces"
          group="workspaces"
          period={period}
          rowKey={(r) => r.workspace_id}
          columns={[{ label: 'Workspace', render: (r) => toLogs(r.workspace_slug ?? r.workspace_id, { workspace_id: r.workspace_id }) }, ...trafficColumns<WorkspaceRow>()]}
        />
      )}
    </div>
  );
}
