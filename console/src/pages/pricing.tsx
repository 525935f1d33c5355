/**
 * Pricing & models: the model catalogue the gateway prices usage with (shipped list prices merged
 * with the organisation's overrides). Filter by provider and model; edit a model's prices or price
 * a new one (model_pricing.update); remove an override; look up what price a model name resolves
 * to (dated snapshots resolve to their base model).
 *
 * The API's unit is USD cents per token; the page shows and takes USD per million tokens.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Badge, Button, Dialog, Empty, ErrorNote, Loaded, Page, Section, SelectField, Table, TextField, fmtTime, useAction, useEditing, useLoad, useSession } from '../ui';
import { NumberField, PROVIDERS, providerLabel } from './provider-fields';
import './pricing.css';

type PayAsYouGo = Record<string, unknown> & Partial<Record<PriceKey, { price: number }>>;

interface Pricing {
  id: string;
  provider: string;
  model: string;
  pay_as_you_go: PayAsYouGo;
  currency: string;
  source: 'default' | 'custom';
  last_updated_at: string | null;
}

type PriceKey = 'request_token' | 'response_token' | 'cache_read_input_token' | 'cache_write_input_token';
const PRICES: Array<[PriceKey, string]> = [
  ['request_token', 'Input'],
  ['response_token', 'Output'],
  ['cache_read_input_token', 'Cache read'],
  ['cache_write_input_token', 'Cache write'],
];

/** Cents per token → USD per million tokens, and back. */
const perMillion = (cents: number): number => Math.round(cents * 1e4 * 1e6) / 1e6;
const centsPerToken = (usdPerMillion: number): number => usdPerMillion / 1e4;

function priceText(p: PayAsYouGo, key: PriceKey): string {
  const v = p[key]?.price;
  return v === undefined ? '—' : `$${perMillion(v).toLocaleString('en-US', { maximumFractionDigits: 4 })}`;
}

export function Pricing(): JSX.Element {
  const session = useSession();
  const [provider, setProvider] = useState('');
  const [model, setModel] = useState('');
  // The API filters by provider only; the model filter narrows the loaded list (see the report).
  const list = useLoad((signal) => api.get<ListPage<Pricing>>('/v1/model-pricing', { provider: provider || undefined, page_size: 500 }, signal), [provider]);
  const dialog = useEditing<Pricing>(list.reload);
  const canEdit = session.can('model_pricing.update');
  const needle = model.trim().toLowerCase();

  return (
    <Page
      title="Pricing & models"
      description="The models the gateway knows prices for, in USD per million tokens. Costs in logs, analytics and budgets use these; an override wins over the shipped price."
      actions={canEdit && <Button kind="primary" onClick={() => dialog.open('new')}>Price a model</Button>}
    >
      <div class="filters">
        <SelectField label="Provider" value={provider} onChange={setProvider} options={[['', 'All providers'], ...PROVIDERS.map(([id, label]): [string, string] => [id, label])]} />
        <TextField label="Model" value={model} onInput={setModel} placeholder="gpt-4o" />
      </div>
      <Loaded state={list}>
        {(data) => {
          const rows = needle === '' ? data.data : data.data.filter((p) => p.model.toLowerCase().includes(needle));
          return (
            <>
              <p class="muted" role="status">
                {rows.length} of {data.total} models
              </p>
              <Table
                caption="Model prices"
                rows={rows}
                rowKey={(p) => p.id}
                empty={<Empty title="No priced models match.">{canEdit ? 'Clear the filters, or price this model with “Price a model”; unpriced models are logged with no cost.' : 'Clear the filters; unpriced models are logged with no cost.'}</Empty>}
                columns={[
                  { label: 'Provider', render: (p) => providerLabel(p.provider) },
                  { label: 'Model', render: (p) => <code>{p.model}</code> },
                  ...PRICES.map(([key, label]) => ({ label: `${label} / 1M`, class: 'num', render: (p: Pricing) => priceText(p.pay_as_you_go, key) })),
                  { label: 'Source', render: (p) => <Badge tone={p.source === 'custom' ? 'warn' : 'plain'}>{p.source === 'custom' ? 'override' : 'shipped'}</Badge> },
                  ...(canEdit
                    ? [{ label: 'Actions', render: (p: Pricing) => <Button aria-label={`Edit the price of ${p.provider}/${p.model}`} onClick={() => dialog.open(p)}>Edit</Button> }]
                    : []),
                ]}
              />
            </>
          );
        }}
      </Loaded>
      <div class="pricing-lookup">
        <Lookup />
      </div>
      {dialog.current !== null && <PriceDialog current={dialog.current === 'new' ? null : dialog.current} onClose={dialog.close} onSaved={dialog.done} />}
    </Page>
  );
}

function PriceDialog(props: { current: Pricing | null; onClose: () => void; onSaved: () => void }): JSX.Element {
  const c = props.current;
  const [provider, setProvider] = useState(c?.provider ?? 'openai');
  const [model, setModel] = useState(c?.model ?? '');
  const [prices, setPrices] = useState<Record<PriceKey, string>>(() => {
    const out = {} as Record<PriceKey, string>;
    for (const [key] of PRICES) {
      const v = c?.pay_as_you_go[key]?.price;
      out[key] = v === undefined ? '' : String(perMillion(v));
    }
    return out;
  });
  const save = useAction(async () => {
    // Prices this form does not show (audio, additional units) are sent back as they were.
    const pay: Record<string, unknown> = { ...(c?.pay_as_you_go ?? {}) };
    for (const [key, label] of PRICES) {
      const text = prices[key].trim();
      if (text === '') {
        delete pay[key];
        continue;
      }
      const n = Number(text);
      if (!Number.isFinite(n) || n < 0) throw new Error(`${label} must be a number of at least 0.`);
      pay[key] = { price: centsPerToken(n) };
    }
    await api.put(`/v1/model-pricing/${encodeURIComponent(provider)}/${encodeURIComponent(model.trim())}`, { pay_as_you_go: pay });
    props.onSaved();
  });
  const remove = useAction(async () => {
    if (!confirm(`Remove the override of ${c!.provider}/${c!.model}? The shipped price applies again, if there is one.`)) return;
    await api.del(`/v1/model-pricing/${encodeURIComponent(c!.provider)}/${encodeURIComponent(c!.model)}`);
    props.onSaved();
  });
  return (
    <Dialog title={c === null ? 'Price a model' : `Price of ${c.provider}/${c.model}`} open onClose={props.onClose}>
      <form onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
        {c === null && (
          <div class="form-grid">
            <SelectField label="Provider" value={provider} onChange={setProvider} options={PROVIDERS.map(([id, label]): [string, string] => [id, label])} />
            <TextField label="Model" value={model} onInput={setModel} required placeholder="gpt-4o" hint="A name also prices its dated snapshots (gpt-4o-2024-08-06)." />
          </div>
        )}
        {c !== null && c.last_updated_at !== null && <p class="muted">Overridden {fmtTime(c.last_updated_at)}.</p>}
        <div class="form-grid">
          {PRICES.map(([key, label]) => (
            <NumberField key={key} label={`${label} (USD per 1M tokens)`} value={prices[key]} onInput={(v) => setPrices({ ...prices, [key]: v })} required={key === 'request_token' || key === 'response_token'} />
          ))}
        </div>
        <ErrorNote error={save.error ?? remove.error} />
        <div class="row end">
          {c?.source === 'custom' && (
            <Button kind="danger" busy={remove.busy} onClick={() => void remove.run()}>
              Remove override
            </Button>
          )}
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={save.busy} disabled={model.trim() === ''}>
            Save price
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/** The public lookup (`/model-configs/pricing/:provider/:model`): what a model name is priced at. */
function Lookup(): JSX.Element {
  const [provider, setProvider] = useState('openai');
  const [model, setModel] = useState('');
  const [found, setFound] = useState<{ name: string; pay: PayAsYouGo } | null>(null);
  const action = useAction(async () => {
    setFound(null);
    const name = model.trim();
    const r = await api.get<{ pay_as_you_go: PayAsYouGo }>(`/model-configs/pricing/${encodeURIComponent(provider)}/${encodeURIComponent(name)}`);
    setFound({ name: `${provider}/${name}`, pay: r.pay_as_you_go });
  });
  return (
    <Section title="Look up a model">
      <form class="filters" aria-label="Look up a model's price" onSubmit={(e) => { e.preventDefault(); void action.run(); }}>
        <SelectField label="Lookup provider" value={provider} onChange={setProvider} options={PROVIDERS.map(([id, label]): [string, string] => [id, label])} />
        <TextField label="Model name" value={model} onInput={setModel} placeholder="gpt-4o-2024-08-06" />
        <Button type="submit" busy={action.busy} disabled={model.trim() === ''}>
          Look up
        </Button>
      </form>
      <ErrorNote error={action.error} />
      {found !== null && (
        <p role="status">
          <code>{found.name}</code> costs {PRICES.map(([key, label]) => `${label} ${priceText(found.pay, key)}`).join(' · ')} per 1M tokens.
        </p>
      )}
    </Section>
  );
}
