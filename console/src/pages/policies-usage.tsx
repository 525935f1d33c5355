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
import { Conditions, GroupKeys, PolicyActions, PolicyForm, PolicyList, policyName, usePolicies, usePolicyScope, type PolicyBase } from './policies-form';

type BudgetType = 'cost' | 'tokens';
type Periodic = 'monthly' | 'weekly' | null;

export interface UsageLimitPolicy extends PolicyBase {
  type: BudgetType;
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: Periodic;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
}

interface Entity {
  id: string;
  value_key: string;
  current_usage: number;
  status: 'active' | 'exhausted';
}

const ENTITY_PAGE_SIZE = 20;

const unitOf = (t: BudgetType): string => (t === 'cost' ? 'USD' : 'tokens');
/** Dollars to the hundredth of a cent: a budget is spent a fraction of a cent at a time. */
const fmtUsd = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 4 });
const periodicLabel = (p: Periodic): string => (p === null ? 'never (cumulative)' : p);

export function UsageLimits(props: { workspace: string; workspaces: Workspace[] }): JSX.Element {
  const session = useSession();
  const [usageOf, setUsageOf] = useState<UsageLimitPolicy | null>(null);
  const policies = usePolicies<UsageLimitPolicy>('usage-limits', props.workspace, (p) => `Delete the usage limit “${policyName(p)}”? Requests no longer spend against it; its usage is kept.`);
  const wsName = (id: string): string => props.workspaces.find((w) => w.id === id)?.slug ?? id;
  return (
    <>
      <PolicyList
        policies={policies}
        what="usage limit"
        about={
          <>
            A usage limit is a budget in USD or tokens for each value of its “group by” keys (each API key, each user…). A spent budget refuses
            requests until it is reset, by hand here or each week or month.
          </>
        }
        caption="Usage-limit policies"
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
              <PolicyActions policy={p} policies={policies}>
                {session.can('policies.read') && (
                  <Button aria-label={`Usage of ${policyName(p)}`} onClick={() => setUsageOf(p)}>
                    Usage
                  </Button>
                )}
              </PolicyActions>
            ),
          },
        ]}
        form={(policy) => <UsageLimitForm chosen={props.workspace} policy={policy} workspaces={props.workspaces} onClose={policies.dialog.close} onDone={policies.dialog.done} />}
      />
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
  const p = props.policy;
  const scope = usePolicyScope(p, props.chosen, props.workspaces);
  const [type, setType] = useState<BudgetType>(p?.type ?? 'cost');
  const [limit, setLimit] = useState(p === undefined ? '' : String(p.credit_limit));
  const [alert, setAlert] = useState(p?.alert_threshold === null || p === undefined ? '' : String(p.alert_threshold));
  const [periodic, setPeriodic] = useState<string>(p?.periodic_reset ?? '');
  const action = useAction(async () => {
    const common: Record<string, unknown> = {
      credit_limit: Number(limit),
      alert_threshold: alert.trim() === '' ? null : Number(alert),
      periodic_reset: periodic === '' ? null : periodic,
      ...scope.named(),
    };
    if (p !== undefined) {
      await api.put(`/v1/policies/usage-limits/${p.id}`, common);
    } else {
      await api.post('/v1/policies/usage-limits', { ...common, ...scope.scoped(), type });
    }
    props.onDone();
  });
  const numeric = (s: string): boolean => s.trim() !== '' && Number.isFinite(Number(s));
  const ready = numeric(limit) && (alert.trim() === '' || numeric(alert));
  const unit = unitOf(p?.type ?? type);
  return (
    <PolicyForm
      what="usage limit"
      policy={p}
      scope={scope}
      workspaces={props.workspaces}
      namePlaceholder="Monthly budget per key"
      workspaceHint="The policy counts requests acting in this workspace."
      counts={unit}
      action={action}
      ready={ready}
      onClose={props.onClose}
    >
      {p === undefined && <SelectField label="Counts" value={type} onChange={(v) => setType(v as BudgetType)} options={[['cost', 'Cost (USD)'], ['tokens', 'Tokens']]} />}
      <TextField label="Budget" type="number" value={limit} onInput={setLimit} required hint={`In ${unit}, for each value.`} />
      <TextField label="Alert threshold (optional)" type="number" value={alert} onInput={setAlert} hint={`In ${unit}; below the budget.`} />
      <SelectField label="Starts over" value={periodic} onChange={setPeriodic} options={[['', 'Never (cumulative)'], ['weekly', 'Every week (Monday, UTC)'], ['monthly', 'Every month (the 1st, UTC)']]} />
    </PolicyForm>
  );
}
