/**
 * Rate-limit policies: list (by workspace), create (conditions, group by, requests or tokens per
 * minute, hour or day), edit (name and limit: what the API lets change), delete (archive). The
 * API keeps no per-entity counters to show for these; the limit is enforced by the `rate-limit`
 * plugin, and refusals show in Logs as 429s.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Button, Dialog, Empty, ErrorNote, Loaded, Pager, SelectField, Table, TextField, fmtNumber, fmtTime, useAction, useLoad, useSession } from '../ui';
import type { Workspace } from './api-keys';
import { Conditions, ConditionsEditor, GroupByEditor, GroupKeys, pairsReady, trimmed, type Condition, type GroupBy } from './policies-form';

type RateType = 'requests' | 'tokens';
type RateUnit = 'rpm' | 'rph' | 'rpd';

export interface RateLimitPolicy {
  id: string;
  name: string | null;
  conditions: Condition[];
  group_by: GroupBy[];
  type: RateType;
  unit: RateUnit;
  value: number;
  status: string;
  workspace_id: string;
  created_at: string;
  last_updated_at: string;
}

const UNITS: Array<[RateUnit, string]> = [
  ['rpm', 'per minute'],
  ['rph', 'per hour'],
  ['rpd', 'per day'],
];
const unitLabel = (u: RateUnit): string => UNITS.find(([k]) => k === u)?.[1] ?? u;

const PAGE_SIZE = 25;

export function RateLimits(props: { workspace: string; workspaces: Workspace[] }): JSX.Element {
  const session = useSession();
  const [page, setPage] = useState(0);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<RateLimitPolicy | null>(null);
  const list = useLoad(
    (signal) => api.get<ListPage<RateLimitPolicy>>('/v1/policies/rate-limits', { workspace_id: props.workspace || undefined, current_page: page, page_size: PAGE_SIZE }, signal),
    [props.workspace, page],
  );
  const remove = useAction(async (p: RateLimitPolicy) => {
    if (!confirm(`Delete the rate limit “${p.name ?? p.id}”? Requests are no longer limited by it.`)) return;
    await api.del(`/v1/policies/rate-limits/${p.id}`);
    list.reload();
  });
  const wsName = (id: string): string => props.workspaces.find((w) => w.id === id)?.slug ?? id;
  return (
    <>
      <div class="row policy-head">
        <p class="muted">
          A rate limit caps requests or tokens per minute, hour or day, counted separately for each value of its “group by” keys. Over the limit, the
          gateway answers 429 with <code>retry-after</code>.
        </p>
        {session.can('policies.create') && (
          <Button kind="primary" onClick={() => setCreating(true)}>
            New rate limit
          </Button>
        )}
      </div>
      <ErrorNote error={remove.error} />
      <Loaded state={list}>
        {(found) => (
          <>
            <Table
              caption="Rate-limit policies"
              rows={found.data}
              rowKey={(p) => p.id}
              empty={<Empty title="No rate limits.">{session.can('policies.create') ? 'Add one with “New rate limit”.' : 'This key may not create policies.'}</Empty>}
              columns={[
                { label: 'Name', render: (p) => p.name ?? <span class="muted">unnamed</span> },
                { label: 'Limit', render: (p) => `${fmtNumber(p.value)} ${p.type} ${unitLabel(p.unit)}` },
                { label: 'Applies to', render: (p) => <Conditions value={p.conditions} /> },
                { label: 'Counted per', render: (p) => <GroupKeys value={p.group_by} /> },
                { label: 'Workspace', render: (p) => wsName(p.workspace_id) },
                { label: 'Updated', render: (p) => fmtTime(p.last_updated_at) },
                {
                  label: 'Actions',
                  render: (p) => (
                    <div class="row">
                      {session.can('policies.update') && (
                        <Button aria-label={`Edit ${p.name ?? p.id}`} onClick={() => setEditing(p)}>
                          Edit
                        </Button>
                      )}
                      {session.can('policies.delete') && (
                        <Button kind="danger" aria-label={`Delete ${p.name ?? p.id}`} busy={remove.busy} onClick={() => void remove.run(p)}>
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
        <RateLimitForm
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
        <RateLimitForm
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
    </>
  );
}

/** Create (every field) or edit (name, unit, value: the rest is fixed once created). */
function RateLimitForm(props: { chosen: string; policy?: RateLimitPolicy; workspaces: Workspace[]; onClose: () => void; onDone: () => void }): JSX.Element {
  const session = useSession();
  const p = props.policy;
  const [name, setName] = useState(p?.name ?? '');
  // The workspace the page is filtered on, else the first one (the API's default without any).
  const [workspace, setWorkspace] = useState(session.principal.workspace_id ?? (props.chosen || props.workspaces[0]?.id) ?? '');
  const [conditions, setConditions] = useState<Condition[]>(p?.conditions ?? [{ key: 'workspace_id', value: '*' }]);
  const [groupBy, setGroupBy] = useState<GroupBy[]>(p?.group_by ?? [{ key: 'api_key' }]);
  const [type, setType] = useState<RateType>(p?.type ?? 'requests');
  const [unit, setUnit] = useState<RateUnit>(p?.unit ?? 'rpm');
  const [value, setValue] = useState(p === undefined ? '60' : String(p.value));
  const action = useAction(async () => {
    const n = Number(value);
    if (p !== undefined) {
      await api.put(`/v1/policies/rate-limits/${p.id}`, { ...(name.trim() !== '' ? { name: name.trim() } : {}), unit, value: n });
    } else {
      const body: Record<string, unknown> = { ...trimmed(conditions, groupBy), type, unit, value: n };
      if (name.trim() !== '') body.name = name.trim();
      if (session.isOrganisation && workspace !== '') body.workspace_id = workspace;
      await api.post('/v1/policies/rate-limits', body);
    }
    props.onDone();
  });
  const ready = value.trim() !== '' && Number.isFinite(Number(value)) && (p !== undefined || pairsReady(conditions, groupBy));
  return (
    <Dialog title={p === undefined ? 'New rate limit' : `Edit rate limit “${p.name ?? p.id}”`} open onClose={props.onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} placeholder="60 requests a minute per key" />
          {p === undefined && session.isOrganisation && props.workspaces.length > 0 && (
            <SelectField label="Workspace" value={workspace} onChange={setWorkspace} options={props.workspaces.map((w): [string, string] => [w.id, w.slug])} hint="The policy limits requests acting in this workspace." />
          )}
        </div>
        {p === undefined ? (
          <>
            <ConditionsEditor value={conditions} onChange={setConditions} />
            <GroupByEditor value={groupBy} onChange={setGroupBy} />
          </>
        ) : (
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
            <dd>{p.type}</dd>
          </dl>
        )}
        {p !== undefined && <p class="muted">Conditions, grouping and what is counted are fixed once created; to change them, create a new policy.</p>}
        <div class="form-grid">
          {p === undefined && <SelectField label="Counts" value={type} onChange={(v) => setType(v as RateType)} options={[['requests', 'Requests'], ['tokens', 'Tokens']]} />}
          <TextField label="Limit" type="number" value={value} onInput={setValue} required hint={`${type} allowed ${unitLabel(unit)}`} />
          <SelectField label="Per" value={unit} onChange={(v) => setUnit(v as RateUnit)} options={UNITS.map(([k, l]): [string, string] => [k, l])} />
        </div>
        <ErrorNote error={action.error} />
        <div class="row end">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={action.busy} disabled={!ready}>
            {p === undefined ? 'Create rate limit' : 'Save'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
