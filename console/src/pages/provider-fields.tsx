/**
 * Form pieces shared by the virtual keys, integrations and providers pages: the provider picker,
 * the provider-specific credential fields (Azure resource and deployment, AWS region and keys,
 * Vertex project, …), the rate and usage limit fields, and what the providers and virtual keys
 * pages share: their list by workspace, and a record's Reset usage and Delete.
 *
 * Secret fields are write-only: password inputs, never prefilled, never shown back. Left blank
 * on an update, the stored value stays; the API only says whether one is set.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Button, Field, Loaded, Pager, SelectField, Table, TextField, useAction, useEditing, useLoad, type Column } from '../ui';
import { useWorkspaces } from './api-keys';
import './org.css';

/** Provider ids the gateway ships adapters for (the API lists none; see the report). */
export const PROVIDERS: Array<[id: string, label: string]> = [
  ['openai', 'OpenAI'],
  ['anthropic', 'Anthropic'],
  ['azure-openai', 'Azure OpenAI'],
  ['google', 'Google Gemini'],
  ['bedrock', 'AWS Bedrock'],
  ['vertex-ai', 'Google Vertex AI'],
  ['groq', 'Groq'],
  ['mistral-ai', 'Mistral AI'],
  ['together-ai', 'Together AI'],
  ['deepseek', 'DeepSeek'],
  ['fireworks-ai', 'Fireworks AI'],
  ['openrouter', 'OpenRouter'],
  ['perplexity-ai', 'Perplexity'],
  ['x-ai', 'xAI'],
  ['cerebras', 'Cerebras'],
  ['deepinfra', 'DeepInfra'],
  ['ollama', 'Ollama'],
  ['vllm', 'vLLM'],
  ['lm-studio', 'LM Studio'],
];

export const providerLabel = (id: string | null | undefined): string => (id === null || id === undefined ? '—' : PROVIDERS.find(([p]) => p === id)?.[1] ?? id);

interface FieldSpec {
  name: string;
  label: string;
  /** Sealed at rest and never shown: a password input. */
  secret?: boolean;
  /** A JSON object (sent parsed). */
  json?: boolean;
  options?: Array<[string, string]>;
  hint?: string;
}

const AZURE: FieldSpec[] = [
  { name: 'resource_name', label: 'Azure resource name', hint: 'The <name> of <name>.openai.azure.com.' },
  { name: 'deployment_name', label: 'Deployment name' },
  { name: 'api_version', label: 'API version', hint: 'e.g. 2024-10-21' },
  { name: 'azure_auth_mode', label: 'Azure auth mode', options: [['', 'Not set (API key)'], ['default', 'Default'], ['entra', 'Entra ID'], ['managed', 'Managed identity']] },
  { name: 'azure_entra_tenant_id', label: 'Entra tenant id' },
  { name: 'azure_entra_client_id', label: 'Entra client id' },
  { name: 'azure_entra_client_secret', label: 'Entra client secret', secret: true },
  { name: 'azure_managed_client_id', label: 'Managed identity client id' },
];

const AWS: FieldSpec[] = [
  { name: 'aws_region', label: 'AWS region', hint: 'e.g. us-east-1' },
  { name: 'aws_auth_type', label: 'AWS auth type', options: [['', 'Not set'], ['accessKey', 'Access key'], ['assumedRole', 'Assumed role']] },
  { name: 'aws_access_key_id', label: 'AWS access key id' },
  { name: 'aws_secret_access_key', label: 'AWS secret access key', secret: true },
  { name: 'aws_session_token', label: 'AWS session token', secret: true },
  { name: 'aws_role_arn', label: 'AWS role ARN' },
  { name: 'aws_external_id', label: 'AWS external id' },
];

/** The provider-specific fields offered for each provider id (the rest need only a key). */
export const PROVIDER_FIELDS: Record<string, FieldSpec[]> = {
  openai: [
    { name: 'openai_organization', label: 'OpenAI organization' },
    { name: 'openai_project', label: 'OpenAI project' },
  ],
  'azure-openai': AZURE,
  bedrock: AWS,
  'vertex-ai': [
    { name: 'vertex_project_id', label: 'Vertex project id' },
    { name: 'vertex_region', label: 'Vertex region', hint: 'e.g. europe-west4' },
    { name: 'vertex_auth_type', label: 'Vertex auth type', options: [['', 'Not set'], ['basic', 'Basic'], ['serviceAccount', 'Service account']] },
    { name: 'vertex_service_account_json', label: 'Service account JSON', secret: true, json: true, hint: 'Paste the key file’s JSON.' },
  ],
};

/** Field values as typed: strings, '' meaning "not given". */
export type FieldValues = Record<string, string>;

/** The readable (non-secret) stored fields, as initial form values. */
export function initialFields(provider: string, stored: Record<string, unknown> | undefined): FieldValues {
  const out: FieldValues = {};
  for (const spec of PROVIDER_FIELDS[provider] ?? []) {
    const v = stored?.[spec.name];
    if (!spec.secret && typeof v === 'string') out[spec.name] = v;
  }
  return out;
}

/**
 * The body part for the provider fields. On create, blank fields are left out; on update, a
 * blank readable field that was set is removed (`null`), and a blank secret keeps its value.
 * Throws a plain Error when a JSON field does not parse.
 */
export function fieldsBody(provider: string, values: FieldValues, initial: FieldValues | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of PROVIDER_FIELDS[provider] ?? []) {
    const v = (values[spec.name] ?? '').trim();
    if (v === '') {
      if (initial !== null && !spec.secret && (initial[spec.name] ?? '') !== '') out[spec.name] = null;
      continue;
    }
    if (initial !== null && !spec.secret && initial[spec.name] === v) continue;
    if (spec.json) {
      try {
        out[spec.name] = JSON.parse(v) as unknown;
      } catch {
        throw new Error(`${spec.label} is not valid JSON.`);
      }
    } else out[spec.name] = v;
  }
  return out;
}

/** A number input that takes decimals (a plain `type=number` refuses 2.5 with its default step). */
export function NumberField(props: { label: string; value: string; onInput: (v: string) => void; hint?: string; required?: boolean; integer?: boolean }): JSX.Element {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id) => (
        <input
          id={id}
          type="number"
          min={0}
          step={props.integer === true ? 1 : 'any'}
          value={props.value}
          required={props.required}
          onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
        />
      )}
    </Field>
  );
}

/** A write-only secret input: never prefilled; on edit, blank keeps the stored value. */
export function SecretField(props: { label: string; value: string; onInput: (v: string) => void; editing: boolean; isSet?: boolean; hint?: string; required?: boolean }): JSX.Element {
  const state = !props.editing ? '' : props.isSet === true ? 'A value is set; leave blank to keep it. ' : props.isSet === false ? 'Not set. ' : 'Leave blank to keep any stored value. ';
  return (
    <TextField
      label={props.label}
      type="password"
      autoComplete="new-password"
      value={props.value}
      onInput={props.onInput}
      required={props.required}
      hint={`${state}${props.hint ?? 'Write-only: it is never shown again.'}`}
    />
  );
}

/** The provider-specific fields of `provider`; `setSecrets` says which secrets are stored (on edit). */
export function ProviderFields(props: { provider: string; values: FieldValues; onChange: (v: FieldValues) => void; editing: boolean; setSecrets?: ReadonlySet<string> }): JSX.Element | null {
  const specs = PROVIDER_FIELDS[props.provider];
  if (specs === undefined) return null;
  const set = (name: string) => (v: string) => props.onChange({ ...props.values, [name]: v });
  return (
    <fieldset>
      <legend>{providerLabel(props.provider)} settings</legend>
      <div class="form-grid">
        {specs.map((spec) =>
          spec.secret ? (
            <SecretField key={spec.name} label={spec.label} value={props.values[spec.name] ?? ''} onInput={set(spec.name)} editing={props.editing} isSet={props.setSecrets === undefined ? undefined : props.setSecrets.has(spec.name)} hint={spec.hint} />
          ) : spec.options !== undefined ? (
            <SelectField key={spec.name} label={spec.label} value={props.values[spec.name] ?? ''} onChange={set(spec.name)} options={spec.options} hint={spec.hint} />
          ) : (
            <TextField key={spec.name} label={spec.label} value={props.values[spec.name] ?? ''} onInput={set(spec.name)} hint={spec.hint} />
          ),
        )}
      </div>
    </fieldset>
  );
}

// ── limits ───────────────────────────────────────────────────────────────────────────────────

export interface RateLimit {
  type: 'requests' | 'tokens';
  unit: 'rpm' | 'rph' | 'rpd';
  value: number;
}

export interface UsageLimits {
  credit_limit?: number | null;
  type?: 'cost' | 'tokens';
  alert_threshold?: number | null;
  periodic_reset?: 'monthly' | 'weekly' | null;
}

export interface LimitsForm {
  rateValue: string;
  rateType: RateLimit['type'];
  rateUnit: RateLimit['unit'];
  budget: string;
  budgetType: 'cost' | 'tokens';
  alert: string;
  reset: '' | 'monthly' | 'weekly';
}

const UNIT_LABEL: Record<RateLimit['unit'], string> = { rpm: 'per minute', rph: 'per hour', rpd: 'per day' };

export function limitsForm(rate: RateLimit[] | undefined, usage: UsageLimits | null | undefined): LimitsForm {
  const r = rate?.[0];
  return {
    rateValue: r === undefined ? '' : String(r.value),
    rateType: r?.type ?? 'requests',
    rateUnit: r?.unit ?? 'rpm',
    budget: usage?.credit_limit === null || usage?.credit_limit === undefined ? '' : String(usage.credit_limit),
    budgetType: usage?.type ?? 'cost',
    alert: usage?.alert_threshold === null || usage?.alert_threshold === undefined ? '' : String(usage.alert_threshold),
    reset: usage?.periodic_reset ?? '',
  };
}

/** `rate_limits` (an array, empty clears) and `usage_limits` (null clears) for a body. */
export function limitsBody(f: LimitsForm): { rate_limits: RateLimit[]; usage_limits: UsageLimits | null } {
  const num = (s: string, what: string): number => {
    const n = Number(s);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${what} must be a number of at least 0.`);
    return n;
  };
  const rate_limits: RateLimit[] = f.rateValue.trim() === '' ? [] : [{ type: f.rateType, unit: f.rateUnit, value: Math.floor(num(f.rateValue, 'The rate limit')) }];
  const usage_limits: UsageLimits | null =
    f.budget.trim() === ''
      ? null
      : {
          credit_limit: num(f.budget, 'The budget'),
          type: f.budgetType,
          alert_threshold: f.alert.trim() === '' ? null : num(f.alert, 'The alert threshold'),
          periodic_reset: f.reset === '' ? null : f.reset,
        };
  return { rate_limits, usage_limits };
}

/** On update: only the limits the form changed (an unchanged limit is not sent back). */
export function limitsChanges(f: LimitsForm, initial: LimitsForm): Partial<ReturnType<typeof limitsBody>> {
  const now = limitsBody(f);
  const before = limitsBody(initial);
  const out: Partial<ReturnType<typeof limitsBody>> = {};
  if (JSON.stringify(now.rate_limits) !== JSON.stringify(before.rate_limits)) out.rate_limits = now.rate_limits;
  if (JSON.stringify(now.usage_limits) !== JSON.stringify(before.usage_limits)) out.usage_limits = now.usage_limits;
  return out;
}

export function LimitsFields(props: { form: LimitsForm; onChange: (f: LimitsForm) => void }): JSX.Element {
  const f = props.form;
  const set = <K extends keyof LimitsForm>(k: K) => (v: string) => props.onChange({ ...f, [k]: v });
  return (
    <fieldset>
      <legend>Limits</legend>
      <div class="form-grid">
        <NumberField label="Rate limit" integer value={f.rateValue} onInput={set('rateValue')} hint="Blank: no rate limit." />
        <SelectField label="Rate limit counts" value={f.rateType} onChange={set('rateType')} options={[['requests', 'requests'], ['tokens', 'tokens']]} />
        <SelectField label="Rate limit window" value={f.rateUnit} onChange={set('rateUnit')} options={Object.entries(UNIT_LABEL) as Array<[string, string]>} />
      </div>
      <div class="form-grid">
        <NumberField label="Budget" value={f.budget} onInput={set('budget')} hint={f.budgetType === 'cost' ? 'In USD. Blank: no budget.' : 'In tokens. Blank: no budget.'} />
        <SelectField label="Budget counts" value={f.budgetType} onChange={set('budgetType')} options={[['cost', 'cost (USD)'], ['tokens', 'tokens']]} />
        <NumberField label="Alert at" value={f.alert} onInput={set('alert')} hint="Optional, below the budget." />
        <SelectField label="Budget resets" value={f.reset} onChange={set('reset')} options={[['', 'never'], ['weekly', 'weekly'], ['monthly', 'monthly']]} />
      </div>
    </fieldset>
  );
}

/** Limits as one short line for a table. */
export function limitsText(rate: RateLimit[] | undefined, usage: UsageLimits | null | undefined): string {
  const parts = (rate ?? []).map((r) => `${r.value} ${r.type} ${UNIT_LABEL[r.unit] ?? r.unit}`);
  if (usage?.credit_limit !== null && usage?.credit_limit !== undefined) {
    parts.push(`${usage.type === 'tokens' ? `${usage.credit_limit} tokens` : `$${usage.credit_limit}`}${usage.periodic_reset ? ` ${usage.periodic_reset}` : ''}`);
  }
  return parts.length === 0 ? 'none' : parts.join(' · ');
}

const PAGE_SIZE = 25;

/** A page of providers or virtual keys (`path`) in the chosen workspace, and the dialog open on one. */
export function useLimitedList<T extends { id: string; workspace_id: string }>(path: string) {
  const workspaces = useWorkspaces();
  const [workspace, setWorkspace] = useState('');
  const [page, setPage] = useState(0);
  const list = useLoad((signal) => api.get<ListPage<T>>(path, { workspace_id: workspace || undefined, current_page: page, page_size: PAGE_SIZE }, signal), [workspace, page]);
  const dialog = useEditing<T>(list.reload);
  const wsName = (id: string): string => workspaces.list.find((w) => w.id === id)?.slug ?? id;
  return { workspaces: workspaces.list, workspace, setWorkspace, page, setPage, list, dialog, wsName };
}

/**
 * The list of {@link useLimitedList}: the workspace picker (an organisation key with more than
 * one workspace), the table, its pages, and the open dialog (`dialog`; `null`: a new one).
 */
export function LimitedList<T extends { id: string; workspace_id: string }>(props: {
  state: ReturnType<typeof useLimitedList<T>>;
  organisation: boolean;
  caption: string;
  empty: ComponentChildren;
  columns: Column<T>[];
  dialog: (current: T | null) => JSX.Element;
}): JSX.Element {
  const { state } = props;
  const current = state.dialog.current;
  return (
    <>
      {props.organisation && state.workspaces.length > 1 && (
        <div class="filters">
          <SelectField label="Workspace" value={state.workspace} onChange={(v) => { state.setWorkspace(v); state.setPage(0); }} options={[['', 'All workspaces'], ...state.workspaces.map((w): [string, string] => [w.id, w.slug])]} />
        </div>
      )}
      <Loaded state={state.list}>
        {(data) => (
          <>
            <Table caption={props.caption} rows={data.data} rowKey={(r) => r.id} empty={props.empty} columns={props.columns} />
            <Pager page={state.page} pageSize={PAGE_SIZE} total={data.total} onPage={state.setPage} />
          </>
        )}
      </Loaded>
      {current !== null && props.dialog(current === 'new' ? null : current)}
    </>
  );
}

/** Reset usage and Delete of a saved provider or virtual key, each followed by `onDone`. */
export interface UsageActions {
  reset: ReturnType<typeof useAction<[], void>>;
  remove: ReturnType<typeof useAction<[], void>>;
  /** The error of either. */
  error: unknown;
}

/** `path`: the record's API path; `question`: what Delete asks before it deletes. */
export function useUsageActions(path: () => string, question: () => string, onDone: () => void): UsageActions {
  const reset = useAction(async () => {
    await api.put(path(), { reset_usage: true });
    onDone();
  });
  const remove = useAction(async () => {
    if (!confirm(question())) return;
    await api.del(path());
    onDone();
  });
  return { reset, remove, error: reset.error ?? remove.error };
}

/** The Delete and Reset usage buttons of a dialog's footer. */
export function UsageButtons(props: { actions: UsageActions; canDelete: boolean; canReset: boolean }): JSX.Element {
  const { reset, remove } = props.actions;
  return (
    <>
      {props.canDelete && (
        <Button kind="danger" busy={remove.busy} onClick={() => void remove.run()}>
          Delete
        </Button>
      )}
      {props.canReset && (
        <Button busy={reset.busy} onClick={() => void reset.run()}>
          Reset usage
        </Button>
      )}
    </>
  );
}

/** A provider picker (a select of the known ids). */
export function ProviderSelect(props: { value: string; onChange: (v: string) => void; label?: string }): JSX.Element {
  return <SelectField label={props.label ?? 'Provider'} value={props.value} onChange={props.onChange} options={PROVIDERS.map(([id, label]): [string, string] => [id, `${label} (${id})`])} />;
}

/** An optional ISO time typed in a datetime-local input. */
export function ExpiryField(props: { value: string; onInput: (v: string) => void }): JSX.Element {
  return (
    <Field label="Expires" hint="Optional; local time.">
      {(id) => <input id={id} type="datetime-local" value={props.value} onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)} />}
    </Field>
  );
}

/** `2025-01-02T03:04` (local) from an ISO time, for a datetime-local input. */
export function localInput(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The ISO time of a datetime-local value, or null when blank. */
export function isoOf(local: string): string | null {
  if (local.trim() === '') return null;
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) throw new Error('The time is not valid.');
  return d.toISOString();
}
