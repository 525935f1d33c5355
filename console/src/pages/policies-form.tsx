/**
 * What rate-limit and usage-limit policies share: their `conditions` (which requests a policy
 * applies to) and `group_by` (one counter per value), edited as rows with the keys the gateway
 * understands offered as suggestions; how a policy's conditions and grouping read in a table;
 * the list of one kind (a page by workspace, Edit, Delete asked first) and the frame of its
 * create/edit dialog (name, workspace, conditions and grouping, fixed once created); and the tab
 * strip of the Policies page.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Button, Dialog, Empty, ErrorNote, Loaded, Pager, SelectField, Table, TextField, useAction, useEditing, useLoad, useSession, type Column } from '../ui';
import type { Workspace } from './api-keys';

export interface Condition {
  key: string;
  value: string;
}

export interface GroupBy {
  key: string;
}

/** The request facts policies can name (core/policy/facts.ts), and what each one is. */
export const FACT_KEYS: Array<[key: string, label: string]> = [
  ['workspace_id', 'workspace (id or slug)'],
  ['api_key', 'API key id'],
  ['virtual_key', 'virtual key slug'],
  ['provider', 'provider'],
  ['model', 'model'],
  ['metadata._user', 'metadata._user (any metadata.<name>)'],
];

/** The suggestions of every key field (a `<datalist>`; any `metadata.<name>` may be typed). */
function KeyList({ id }: { id: string }): JSX.Element {
  return (
    <datalist id={id}>
      {FACT_KEYS.map(([k, label]) => (
        <option key={k} value={k}>
          {label}
        </option>
      ))}
    </datalist>
  );
}

function PairInput(props: { label: string; value: string; onInput: (v: string) => void; list?: string; placeholder?: string }): JSX.Element {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input id={id} list={props.list} value={props.value} placeholder={props.placeholder} autoComplete="off" required onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)} />
    </div>
  );
}

/** Conditions as rows of key and value; `*` matches any present value. */
export function ConditionsEditor({ value, onChange }: { value: Condition[]; onChange: (v: Condition[]) => void }): JSX.Element {
  const listId = useId();
  const set = (i: number, patch: Partial<Condition>): void => onChange(value.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  return (
    <fieldset>
      <legend>Applies to requests where</legend>
      <KeyList id={listId} />
      <div class="pairs">
        {value.map((c, i) => (
          <div class="pair" key={i}>
            <PairInput label={`Condition ${i + 1} key`} value={c.key} list={listId} placeholder="workspace_id" onInput={(v) => set(i, { key: v })} />
            <PairInput label={`Condition ${i + 1} value`} value={c.value} placeholder="* (any)" onInput={(v) => set(i, { value: v })} />
            <Button aria-label={`Remove condition ${i + 1}`} disabled={value.length <= 1} onClick={() => onChange(value.filter((_, j) => j !== i))}>
              Remove
            </Button>
          </div>
        ))}
      </div>
      <Button onClick={() => onChange([...value, { key: '', value: '*' }])}>Add condition</Button>
      <p class="muted">Every condition must hold. A value of <code>*</code> matches any request that has the fact.</p>
    </fieldset>
  );
}

/** The keys whose values each get their own counter. */
export function GroupByEditor({ value, onChange }: { value: GroupBy[]; onChange: (v: GroupBy[]) => void }): JSX.Element {
  const listId = useId();
  return (
    <fieldset>
      <legend>Counted separately for each</legend>
      <KeyList id={listId} />
      <div class="pairs">
        {value.map((g, i) => (
          <div class="pair" key={i}>
            <PairInput label={`Group by ${i + 1}`} value={g.key} list={listId} placeholder="api_key" onInput={(v) => onChange(value.map((x, j) => (j === i ? { key: v } : x)))} />
            <span />
            <Button aria-label={`Remove group by ${i + 1}`} disabled={value.length <= 1} onClick={() => onChange(value.filter((_, j) => j !== i))}>
              Remove
            </Button>
          </div>
        ))}
      </div>
      <Button onClick={() => onChange([...value, { key: '' }])}>Add key</Button>
    </fieldset>
  );
}

/** Conditions and grouping complete enough to send (the API checks the rest). */
export function pairsReady(conditions: Condition[], groupBy: GroupBy[]): boolean {
  return conditions.length > 0 && conditions.every((c) => c.key.trim() !== '') && groupBy.length > 0 && groupBy.every((g) => g.key.trim() !== '');
}

export const trimmed = (conditions: Condition[], groupBy: GroupBy[]): { conditions: Condition[]; group_by: GroupBy[] } => ({
  conditions: conditions.map((c) => ({ key: c.key.trim(), value: c.value.trim() })),
  group_by: groupBy.map((g) => ({ key: g.key.trim() })),
});

/** `workspace_id = default, model = *` */
export function Conditions({ value }: { value: Condition[] }): JSX.Element {
  return (
    <span>
      {value.map((c, i) => (
        <span key={i}>
          {i > 0 && ', '}
          <code>{c.key}</code> = <code>{c.value}</code>
        </span>
      ))}
    </span>
  );
}

export function GroupKeys({ value }: { value: GroupBy[] }): JSX.Element {
  return <span>{value.map((g) => g.key).join(', ')}</span>;
}

/** Tabs (arrow keys move between them), each showing its own panel. */
export function Tabs<T extends string>(props: { label: string; tabs: Array<[T, string]>; current: T; onChange: (t: T) => void; panelId: string }): JSX.Element {
  const index = props.tabs.findIndex(([t]) => t === props.current);
  return (
    <div class="tabs" role="tablist" aria-label={props.label}>
      {props.tabs.map(([t, label]) => (
        <button
          key={t}
          id={`tab-${t}`}
          type="button"
          role="tab"
          aria-selected={t === props.current}
          aria-controls={props.panelId}
          tabIndex={t === props.current ? 0 : -1}
          onClick={() => props.onChange(t)}
          onKeyDown={(e) => {
            const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
            if (step === 0) return;
            e.preventDefault();
            const next = props.tabs[(index + step + props.tabs.length) % props.tabs.length]![0];
            props.onChange(next);
            document.getElementById(`tab-${next}`)?.focus();
          }}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

// ── a kind of policy ─────────────────────────────────────────────────────────────────────────

/** The fields both kinds of policy have. */
export interface PolicyBase {
  id: string;
  name: string | null;
  conditions: Condition[];
  group_by: GroupBy[];
  status: string;
  workspace_id: string;
  created_at: string;
  last_updated_at: string;
}

export const policyName = (p: PolicyBase): string => p.name ?? p.id;

const PAGE_SIZE = 25;

/** A page of one kind of policy (`/v1/policies/<kind>`) in `workspace`, its Delete, and its dialog. */
export function usePolicies<P extends PolicyBase>(kind: 'rate-limits' | 'usage-limits', workspace: string, question: (p: P) => string) {
  const [page, setPage] = useState(0);
  const list = useLoad(
    (signal) => api.get<ListPage<P>>(`/v1/policies/${kind}`, { workspace_id: workspace || undefined, current_page: page, page_size: PAGE_SIZE }, signal),
    [workspace, page],
  );
  const remove = useAction(async (p: P) => {
    if (!confirm(question(p))) return;
    await api.del(`/v1/policies/${kind}/${p.id}`);
    list.reload();
  });
  const dialog = useEditing<P>(list.reload);
  return { page, setPage, list, remove, dialog };
}

export type Policies<P extends PolicyBase> = ReturnType<typeof usePolicies<P>>;

/** A policy's buttons: the kind's own (`children`), then Edit and Delete as the key may. */
export function PolicyActions<P extends PolicyBase>(props: { policy: P; policies: Policies<P>; children?: ComponentChildren }): JSX.Element {
  const session = useSession();
  const { policy: p, policies } = props;
  return (
    <div class="row">
      {props.children}
      {session.can('policies.update') && (
        <Button aria-label={`Edit ${policyName(p)}`} onClick={() => policies.dialog.open(p)}>
          Edit
        </Button>
      )}
      {session.can('policies.delete') && (
        <Button kind="danger" aria-label={`Delete ${policyName(p)}`} busy={policies.remove.busy} onClick={() => void policies.remove.run(p)}>
          Delete
        </Button>
      )}
    </div>
  );
}

/** One kind's tab: what it is, New, the table of them with pages, and the open dialog (`form`). */
export function PolicyList<P extends PolicyBase>(props: {
  policies: Policies<P>;
  /** `rate limit` */
  what: string;
  about: ComponentChildren;
  caption: string;
  columns: Column<P>[];
  form: (policy: P | undefined) => JSX.Element;
}): JSX.Element {
  const session = useSession();
  const { policies } = props;
  const current = policies.dialog.current;
  return (
    <>
      <div class="row policy-head">
        <p class="muted">{props.about}</p>
        {session.can('policies.create') && (
          <Button kind="primary" onClick={() => policies.dialog.open('new')}>
            {`New ${props.what}`}
          </Button>
        )}
      </div>
      <ErrorNote error={policies.remove.error} />
      <Loaded state={policies.list}>
        {(found) => (
          <>
            <Table
              caption={props.caption}
              rows={found.data}
              rowKey={(p) => p.id}
              empty={<Empty title={`No ${props.what}s.`}>{session.can('policies.create') ? `Add one with “New ${props.what}”.` : 'This key may not create policies.'}</Empty>}
              columns={props.columns}
            />
            <Pager page={policies.page} pageSize={PAGE_SIZE} total={found.total} onPage={policies.setPage} />
          </>
        )}
      </Loaded>
      {current !== null && props.form(current === 'new' ? undefined : current)}
    </>
  );
}

/** The fields every policy's form has: name, workspace (a new one), conditions and grouping. */
export function usePolicyScope(policy: PolicyBase | undefined, chosen: string, workspaces: Workspace[]) {
  const session = useSession();
  const [name, setName] = useState(policy?.name ?? '');
  // The workspace the page is filtered on, else the first one (the API's default without any).
  const [workspace, setWorkspace] = useState(session.principal.workspace_id ?? (chosen || workspaces[0]?.id) ?? '');
  const [conditions, setConditions] = useState<Condition[]>(policy?.conditions ?? [{ key: 'workspace_id', value: '*' }]);
  const [groupBy, setGroupBy] = useState<GroupBy[]>(policy?.group_by ?? [{ key: 'api_key' }]);
  return {
    name, setName, workspace, setWorkspace, conditions, setConditions, groupBy, setGroupBy,
    /** The name, if one is typed. */
    named: (): { name?: string } => (name.trim() !== '' ? { name: name.trim() } : {}),
    /** What a new policy adds: its conditions, grouping and (an organisation key's) workspace. */
    scoped: (): Record<string, unknown> => ({ ...trimmed(conditions, groupBy), ...(session.isOrganisation && workspace !== '' ? { workspace_id: workspace } : {}) }),
    /** The conditions and grouping are complete (or fixed: an edit). */
    ready: policy !== undefined || pairsReady(conditions, groupBy),
  };
}

export type PolicyScope = ReturnType<typeof usePolicyScope>;

/**
 * A policy's create or edit dialog: name and workspace, the conditions and grouping (read-only
 * once created), the kind's fields (`children`), the error and the buttons.
 */
export function PolicyForm(props: {
  what: string;
  policy: PolicyBase | undefined;
  scope: PolicyScope;
  workspaces: Workspace[];
  namePlaceholder: string;
  workspaceHint: string;
  /** What an existing policy counts, in words. */
  counts: string;
  action: { run: () => Promise<unknown>; busy: boolean; error: unknown };
  ready: boolean;
  onClose: () => void;
  children: ComponentChildren;
}): JSX.Element {
  const session = useSession();
  const { policy: p, scope } = props;
  return (
    <Dialog title={p === undefined ? `New ${props.what}` : `Edit ${props.what} “${policyName(p)}”`} open onClose={props.onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void props.action.run();
        }}
      >
        <div class="form-grid">
          <TextField label="Name" value={scope.name} onInput={scope.setName} placeholder={props.namePlaceholder} />
          {p === undefined && session.isOrganisation && props.workspaces.length > 0 && (
            <SelectField label="Workspace" value={scope.workspace} onChange={scope.setWorkspace} options={props.workspaces.map((w): [string, string] => [w.id, w.slug])} hint={props.workspaceHint} />
          )}
        </div>
        {p === undefined ? (
          <>
            <ConditionsEditor value={scope.conditions} onChange={scope.setConditions} />
            <GroupByEditor value={scope.groupBy} onChange={scope.setGroupBy} />
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
              <dd>{props.counts}</dd>
            </dl>
            <p class="muted">Conditions, grouping and what is counted are fixed once created; to change them, create a new policy.</p>
          </>
        )}
        <div class="form-grid">{props.children}</div>
        <ErrorNote error={props.action.error} />
        <div class="row end">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={props.action.busy} disabled={!(props.ready && scope.ready)}>
            {p === undefined ? `Create ${props.what}` : 'Save'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
