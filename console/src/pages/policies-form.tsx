/**
 * What rate-limit and usage-limit policies share: their `conditions` (which requests a policy
 * applies to) and `group_by` (one counter per value), edited as rows with the keys the gateway
 * understands offered as suggestions; how a policy's conditions and grouping read in a table;
 * and the tab strip of the Policies page.
 */
import type { JSX } from 'preact';
import { useId } from 'preact/hooks';
import { Button } from '../ui';

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
