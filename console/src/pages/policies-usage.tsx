/**
 * Usage-limit policies: budgets in USD or tokens per value of their "group by" keys. List (by
 * workspace), create, edit (name, budget, alert threshold, periodic reset), delete (archive), and
 * each policy's entities — the values it has counted — with their usage as a bar against the
 * budget and a Reset button each (confirmed first).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Badge, Button, Dialog, Empty, ErrorNote, Loaded, Pager, SelectField, Table, TextField, UsageBar, fmtNumber, fmtTime, useAction, useLoad, useSession } from '../ui';
import type { Workspace } from './api-keys';
import { Conditions, ConditionsEditor, GroupByEditor, GroupKeys, pairsReady, trimmed, type Condition, type GroupBy } from './policies-form';

type BudgetType = 'cost' | 'tokens';
type Periodic = 'monthly' | 'weekly' | null;

export interface UsageLimitPolicy {
  id: string;
  name: string | null;
  conditions: Condition[];
  group_by: GroupBy[];
  type: BudgetType;
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: Periodic;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
  status: string;
  workspace_id: string;
  created_at: string;
  last_updated_at: string;
}

interface Entity {
  id: string;
  value_key: string;
  current_usage: number;
  status: 'active' | 'exhausted';
}

const PAGE_SIZE = 25;
const ENTITY_PAGE_SIZE = 20;

const unitOf = (t: BudgetType): string => (t === 'cost' ? 'USD' : 'tokens');
/** Dollars to the hundredth of a cent: a budget is spent a fraction of a cent at a time. */
const fmtUsd = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 4 });
const periodicLabel = (p: Periodic): string => (p === null ? 'never (cumulative)' : p);
const policyName = (p: UsageLimitPolicy): string => p.name ?? p.id;

export function UsageLimits(props: { workspace: string; workspaces: Workspace[] }): JSX.Element {
  const session = useSession();
  const [page, setPage] = useState(0);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<UsageLimitPolicy | null>(null);
  const [usageOf, setUsageOf] = useState<UsageLimitPolicy | null>(null);
  const list = useLoad(
    (signal) => api.get<ListPage<UsageLimitPolicy>>('/v1/policies/usage-limits', { workspace_id: props.workspace || undefined, current_page: page, page_size: PAGE_SIZE }, signal),
    [props.workspace, page],
  );
  const remove = useAction(async (p: UsageLimitPolicy) => {
    if (!confirm(`Delete the usage limit “${policyName(p)}”? Requests no longer spend against it; its usage is kept.`)) return;
    await api.del(`/v1/policies/usage-limits/${p.id}`);
    list.reload();
  });
  const wsName = (id: string): string => props.workspaces.find((w) => w.id === id)?.slug ?? id;
  return (
    <>
      <div class="row policy-head">
        <p class="muted">
          A usage limit is a budget in USD or tokens for each value of its “group by” keys (each API key, each user…). A spent budget refuses
          requests until it is reset, by hand here or each week or month.
        </p>
        {session.can('policies.create') && (
          <Button kind="primary" onClick={() => setCreating(true)}>
            New usage limit
          </Button>
        )}
      </div>
      <ErrorNote error={remove.error} />
      <Loaded state={list}>
        {(found) => (
          <>
            <Table
              caption="Usage-limit policies"
              rows={found.data}
              rowKey={(p) => p.id}
              empty={<Empty title="No usage limits.">{session.can('policies.create') ? 'Add one with “New usage limit”.' : 'This key may not create policies.'}</Empty>}
              columns={[
                { label: 'Name', render: (p) => p.name ?? <span class="muted">unnamed</span> },
                { label: 'Budget', render: (p) => `${fmtNumber(p.credit_limit)} ${unitOf(p.type)}` },
                { label: 'Alert at', render: (p) => (p.alert_threshold === null ? '—' : `${fmtNumber(p.alert_threshold)} ${unitOf(p.type)}`) },
                { label: 'Resets', render: (p) => (p.next_usage_reset_at === null ? periodicLabel(p.periodic_reset) : `${p.periodic_reset} · next ${fmtTime(p.next_usage_reset_at)}`) },
                { label: 'Applies to', render: (p) => <Conditions value={p.conditions} /> },
                { label: 'Counted per', render: (p) => <GroupKeys value={p.group_by} /> },
                { label: 'Workspace', render: (p) => wsName(p.workspace_id) },
                {
                  label: 'Actions',
                  render: (p) => (
                    <div class="row">
                      {session.can('policies.read') && (
                        <Button aria-label={`Usage of ${policyName(p)}`} onClick={() => setUsageOf(p)}>
                          Usage
                        </Button>
                      )}
                      {session.can('policies.update') && (
                        <Button aria-label={`Edit ${policyName(p)}`} onClick={() => setEditing(p)}>
                          Edit
                        </Button>
                      )}
                      {session.can('policies.delete') && (
                        <Button kind="danger" aria-label={`Delete ${policyName(p)}`} busy={remove.busy} onClick={() => void remove.run(p)}>
                          Delete
                        </Button>
                      )}
                    </div>
                  ),
                },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={found.total} onPage={setPage} />
          </>
        )}
      </Loaded>
      {creating && (
        <UsageLimitForm
          chosen={props.workspace}
          workspaces={props.workspaces}
          onClose={() => setCreating(false)}
          onDone={() => {
            setCreating(false);
            list.reload();
          }}
        />
      )}
      {editing !== null && (
        <UsageLimitForm
          chosen={props.workspace}
          policy={editing}
          workspaces={props.workspaces}
          onClose={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
      {usageOf !== null && <EntityUsage policy={usageOf} onClose={() => setUsageOf(null)} />}
    </>
  );
}

/** `api_key:0190…|metadata._user:alice` → `api_key 0190… · metadata._user alice` (empty: "none"). */
function ValueKey({ value }: { value: string }): JSX.Element {
  const [key, period] = value.split('@', 2);
  return (
    <span class="entity-key">
      {key!.split('|').map((part, i) => {
        const colon = part.indexOf(':');
        const name = colon === -1 ? part : part.slice(0, colon);
        const v = colon === -1 ? '' : part.slice(colon + 1);
        return (
          <span key={i}>
            {i > 0 && ' · '}
            <span class="muted">{name}</span> {v === '' ? <em>none</em> : <code>{v}</code>}
          </span>
        );
      })}
      {period !== undefined && <span class="muted"> · period {period}</span>}
    </span>
  );
}

/** The values a policy has counted, each with its usage against the budget and a Reset. */
function EntityUsage({ policy, onClose }: { policy: UsageLimitPolicy; onClose: () => void }): JSX.Element {
  const session = useSession();
  const [page, setPage] = useState(0);
  const [search, setSearch] = useState('');
  const entities = useLoad(
    (signal) => api.get<ListPage<Entity>>(`/v1/policies/usage-limits/${policy.id}/entities`, { search: search.trim() || undefined, current_page: page, page_size: ENTITY_PAGE_SIZE }, signal),
    [policy.id, page, search],
  );
  const reset = useAction(async (e: Entity) => {
    if (!confirm(`Reset the usage of ${e.value_key} under “${policyName(policy)}” to zero? Requests it refused are allowed again.`)) return;
    await api.put(`/v1/policies/usage-limits/${policy.id}/entities/${encodeURIComponent(e.id)}/reset`, {});
    entities.reload();
  });
  const unit = unitOf(policy.type);
  return (
    <Dialog title={`Usage of “${policyName(policy)}”`} open onClose={onClose} wide>
      <p class="muted">
        Budget {fmtNumber(policy.credit_limit)} {unit} for each value of <GroupKeys value={policy.group_by} />
        {policy.periodic_reset !== null && `, reset ${policy.periodic_reset}`}.
      </p>
      <div class="filters">
        <TextField label="Search values" value={search} onInput={(v) => { setSearch(v); setPage(0); }} placeholder="an API key id, a user…" />
        <Button onClick={entities.reload}>Refresh</Button>
      </div>
      <ErrorNote error={reset.error} />
      <Loaded state={entities}>
        {(found) => (
          <>
            <Table
              caption={`Usage under ${policyName(policy)}`}
              rows={found.data}
              rowKey={(e) => e.id}
              empty={<Empty title="Nothing counted yet.">Requests this policy applies to appear here, one row per value of its group-by keys.</Empty>}
              columns={[
                { label: 'Value', render: (e) => <ValueKey value={e.value_key} /> },
                { label: 'Usage', render: (e) => <UsageBar label={`Usage of ${e.value_key}`} value={e.current_usage} max={policy.credit_limit} unit={unit} format={policy.type === 'cost' ? fmtUsd : fmtNumber} /> },
                { label: 'Status', render: (e) => <Badge tone={e.status === 'exhausted' ? 'bad' : 'ok'}>{e.status}</Badge> },
                {
                  label: 'Reset',
                  render: (e) =>
                    session.can('policies.update') && (
                      <Button aria-label={`Reset ${e.value_key}`} busy={reset.busy} disabled={e.current_usage === 0 && e.status === 'active'} onClick={() => void reset.run(e)}>
                        Reset
                      </Button>
                    ),
                },
              ]}
            />
            <Pager page={page} pageSize={ENTITY_PAGE_SIZE} total={found.total} onPage={setPage} />
          </>
        )}
      </Loaded>
    </Dialog>
  );
}

/** Create (every field) or edit (name, budget, alert threshold, periodic reset). */
function UsageLimitForm(props: { chosen: string; policy?: UsageLimitPolicy; workspaces: Workspace[]; onClose: () => void; onDone: () => void }): JSX.Element {
  const session = useSession();
  const p = props.policy;
  const [name, setName] = useState(p?.name ?? '');
  // The workspace the page is filtered on, else the first one (the API's default without any).
  const [workspace, setWorkspace] = useState(session.principal.workspace_id ?? (props.chosen || props.workspaces[0]?.id) ?? '');
  const [conditions, setConditions] = useState<Condition[]>(p?.conditions ?? [{ key: 'workspace_id', value: '*' }]);
  const [groupBy, setGroupBy] = useState<GroupBy[]>(p?.group_by ?? [{ key: 'api_key' }]);
  const [type, setType] = useState<BudgetType>(p?.type ?? 'cost');
  const [limit, setLimit] = useState(p === undefined ? '' : String(p.credit_limit));
  const [alert, setAlert] = useState(p?.alert_threshold === null || p === undefined ? '' : String(p.alert_threshold));
  const [periodic, setPeriodic] = useState<string>(p?.periodic_reset ?? '');
  const action = useAction(async () => {
    const common: Record<string, unknown> = {
      credit_limit: Number(limit),
      alert_threshold: alert.trim() === '' ? null : Number(alert),
      periodic_reset: periodic === '' ? null : periodic,
    };
    if (name.trim() !== '') common.name = name.trim();
    if (p !== undefined) {
      await api.put(`/v1/policies/usage-limits/${p.id}`, common);
    } else {
      const body: Record<string, unknown> = { ...common, ...trimmed(conditions, groupBy), type };
      if (session.isOrganisation && workspace !== '') body.workspace_id = workspace;
      await api.post('/v1/policies/usage-limits', body);
    }
    props.onDone();
  });
  const numeric = (s: string): boolean => s.trim() !== '' && Number.isFinite(Number(s));
  const ready = numeric(limit) && (alert.trim() === '' || numeric(alert)) && (p !== undefined || pairsReady(conditions, groupBy));
  const unit = unitOf(p?.type ?? type);
  return (
    <Dialog title={p === undefined ? 'New usage limit' : `Edit usage limit “${policyName(p)}”`} open onClose={props.onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} placeholder="Monthly budget per key" />
          {p === undefined && session.isOrganisation && props.workspaces.length > 0 && (
            <SelectField label="Workspace" value={workspace} onChange={setWorkspace} options={props.workspaces.map((w): [string, string] => [w.id, w.slug])} hint="The policy counts requests acting in this workspace." />
          )}
        </div>
        {p === undefined ? (
          <>
            <ConditionsEditor value={conditions} onChange={setConditions} />
            <GroupByEditor value={groupBy} onChange={setGroupBy} />
          </>
        ) : (
          <>
            <dl class="facts config-facts">
              <dt>Applies to</dt>
              <dd>
                <Conditions value={p.conditions} />
              </dd>
              <dt>Counted per</dt>
              <dd>
                <GroupKeys value={p.group_by} />
              </dd>
              <dt>Counts</dt>
              <dd>{unit}</dd>
            </dl>
            <p class="muted">Conditions, grouping and what is counted are fixed once created; to change them, create a new policy.</p>
          </>
        )}
        <div class="form-grid">
          {p === undefined && <SelectField label="Counts" value={type} onChange={(v) => setType(v as BudgetType)} options={[['cost', 'Cost (USD)'], ['tokens', 'Tokens']]} />}
          <TextField label="Budget" type="number" value={limit} onInput={setLimit} required hint={`In ${unit}, for each value.`} />
          <TextField label="Alert threshold (optional)" type="number" value={alert} onInput={setAlert} hint={`In ${unit}; below the budget.`} />
          <SelectField label="Starts over" value={periodic} onChange={setPeriodic} options={[['', 'Never (cumulative)'], ['weekly', 'Every week (Monday, UTC)'], ['monthly', 'Every month (the 1st, UTC)']]} />
        </div>
        <ErrorNote error={action.error} />
        <div class="row end">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={action.busy} disabled={!ready}>
            {p === undefined ? 'Create usage limit' : 'Save'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
