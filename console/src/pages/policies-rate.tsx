/**
 * Rate-limit policies: list (by workspace), create (conditions, group by, requests or tokens per
 * minute, hour or day), edit (name and limit: what the API lets change), delete (archive). The
 * API keeps no per-entity counters to show for these; the limit is enforced by the `rate-limit`
 * plugin, and refusals show in Logs as 429s.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { SelectField, TextField, fmtNumber, fmtTime, useAction } from '../ui';
import type { Workspace } from './api-keys';
import { Conditions, GroupKeys, PolicyActions, PolicyForm, PolicyList, policyName, usePolicies, usePolicyScope, type PolicyBase } from './policies-form';

type RateType = 'requests' | 'tokens';
type RateUnit = 'rpm' | 'rph' | 'rpd';

export interface RateLimitPolicy extends PolicyBase {
  type: RateType;
  unit: RateUnit;
  value: number;
}

const UNITS: Array<[RateUnit, string]> = [
  ['rpm', 'per minute'],
  ['rph', 'per hour'],
  ['rpd', 'per day'],
];
const unitLabel = (u: RateUnit): string => UNITS.find(([k]) => k === u)?.[1] ?? u;

export function RateLimits(props: { workspace: string; workspaces: Workspace[] }): JSX.Element {
  const policies = usePolicies<RateLimitPolicy>('rate-limits', props.workspace, (p) => `Delete the rate limit “${policyName(p)}”? Requests are no longer limited by it.`);
  const wsName = (id: string): string => props.workspaces.find((w) => w.id === id)?.slug ?? id;
  return (
    <PolicyList
      policies={policies}
      what="rate limit"
      about={
        <>
          A rate limit caps requests or tokens per minute, hour or day, counted separately for each value of its “group by” keys. Over the limit, the
          gateway answers 429 with <code>retry-after</code>.
        </>
      }
      caption="Rate-limit policies"
      columns={[
        { label: 'Name', render: (p) => p.name ?? <span class="muted">unnamed</span> },
        { label: 'Limit', render: (p) => `${fmtNumber(p.value)} ${p.type} ${unitLabel(p.unit)}` },
        { label: 'Applies to', render: (p) => <Conditions value={p.conditions} /> },
        { label: 'Counted per', render: (p) => <GroupKeys value={p.group_by} /> },
        { label: 'Workspace', render: (p) => wsName(p.workspace_id) },
        { label: 'Updated', render: (p) => fmtTime(p.last_updated_at) },
        { label: 'Actions', render: (p) => <PolicyActions policy={p} policies={policies} /> },
      ]}
      form={(policy) => <RateLimitForm chosen={props.workspace} policy={policy} workspaces={props.workspaces} onClose={policies.dialog.close} onDone={policies.dialog.done} />}
    />
  );
}

/** Create (every field) or edit (name, unit, value: the rest is fixed once created). */
function RateLimitForm(props: { chosen: string; policy?: RateLimitPolicy; workspaces: Workspace[]; onClose: () => void; onDone: () => void }): JSX.Element {
  const p = props.policy;
  const scope = usePolicyScope(p, props.chosen, props.workspaces);
  const [type, setType] = useState<RateType>(p?.type ?? 'requests');
  const [unit, setUnit] = useState<RateUnit>(p?.unit ?? 'rpm');
  const [value, setValue] = useState(p === undefined ? '60' : String(p.value));
  const action = useAction(async () => {
    const n = Number(value);
    if (p !== undefined) {
      await api.put(`/v1/policies/rate-limits/${p.id}`, { ...scope.named(), unit, value: n });
    } else {
      await api.post('/v1/policies/rate-limits', { ...scope.scoped(), type, unit, value: n, ...scope.named() });
    }
    props.onDone();
  });
  const ready = value.trim() !== '' && Number.isFinite(Number(value));
  return (
    <PolicyForm
      what="rate limit"
      policy={p}
      scope={scope}
      workspaces={props.workspaces}
      namePlaceholder="60 requests a minute per key"
      workspaceHint="The policy limits requests acting in this workspace."
      counts={p?.type ?? ''}
      action={action}
      ready={ready}
      onClose={props.onClose}
    >
      {p === undefined && <SelectField label="Counts" value={type} onChange={(v) => setType(v as RateType)} options={[['requests', 'Requests'], ['tokens', 'Tokens']]} />}
      <TextField label="Limit" type="number" value={value} onInput={setValue} required hint={`${type} allowed ${unitLabel(unit)}`} />
      <SelectField label="Per" value={unit} onChange={(v) => setUnit(v as RateUnit)} options={UNITS.map(([k, l]): [string, string] => [k, l])} />
    </PolicyForm>
  );
}
