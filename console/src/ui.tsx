/**
 * The console's building blocks: page frame, labelled fields, tables, dialogs, errors, empty
 * states, and the hooks every page uses to load data. Every control has a label; every error from
 * the API shows its message and its code.
 */
import type { ComponentChildren, JSX } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import type { Session } from './session';

export const SessionContext = createContext<Session | null>(null);

/** The signed-in session (pages render only inside one). */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === null) throw new Error('useSession outside the signed-in shell');
  return session;
}

// ── data ─────────────────────────────────────────────────────────────────────────────────────

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/** Runs `load` when `deps` change (and on `reload()`); a newer run supersedes an older one. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ data, error: undefined, loading: false }),
      (error: unknown) => !abort.signal.aborted && (error as Error).name !== 'AbortError' && setState({ data: undefined, error, loading: false }),
    );
    return () => abort.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** A form's submit: runs `action`, keeps its error and a busy flag. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>): { run: (...args: A) => Promise<R | undefined>; busy: boolean; error: unknown; clear(): void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action(...args);
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

/**
 * What a list page's dialog is open on: a record, `'new'` while one is created, `null` when
 * closed. `done()` closes it after a save and runs `then` (the list's reload).
 */
export function useEditing<T>(then: () => void): { current: T | 'new' | null; open: (what: T | 'new') => void; close: () => void; done: () => void } {
  const [current, setCurrent] = useState<T | 'new' | null>(null);
  const close = (): void => setCurrent(null);
  return {
    current,
    open: setCurrent,
    close,
    done: () => {
      close();
      then();
    },
  };
}

// ── frame ────────────────────────────────────────────────────────────────────────────────────

export function Page(props: { title: string; description?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren }): JSX.Element {
  useEffect(() => {
    document.title = `${props.title} · Gateway console`;
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <div>
          <h1 id="page-title" tabIndex={-1}>{props.title}</h1>
          {props.description !== undefined && <p class="muted">{props.description}</p>}
        </div>
        {props.actions !== undefined && <div class="actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

export function Section(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }): JSX.Element {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

/** An API error as the operator should see it: the message and the stable code. */
export function ErrorNote({ error }: { error: unknown }): JSX.Element | null {
  if (error === undefined || error === null) return null;
  if (error instanceof ApiError) {
    return (
      <div class="error" role="alert">
        <strong>{error.message}</strong>
        <span class="code">
          {error.code}
          {error.status > 0 ? ` · HTTP ${error.status}` : ''}
          {error.param !== undefined ? ` · ${error.param}` : ''}
        </span>
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      <strong>{(error as Error).message ?? String(error)}</strong>
    </div>
  );
}

/** What an empty list means and what to do next. */
export function Empty(props: { title: string; children?: ComponentChildren }): JSX.Element {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      {props.children !== undefined && <div class="muted">{props.children}</div>}
    </div>
  );
}

export function Loading(): JSX.Element {
  return (
    <p class="muted loading" role="status">
      Loading…
    </p>
  );
}

/** Loading, error or content, in that order. */
export function Loaded<T>(props: { state: Loaded<T>; children: (data: T) => ComponentChildren }): JSX.Element {
  const { state } = props;
  if (state.error !== undefined) return <ErrorNote error={state.error} />;
  if (state.data === undefined) return <Loading />;
  return <>{props.children(state.data)}</>;
}

// ── controls ─────────────────────────────────────────────────────────────────────────────────

type Kind = 'primary' | 'danger' | 'plain';

export function Button(props: JSX.ButtonHTMLAttributes<HTMLButtonElement> & { kind?: Kind; busy?: boolean }): JSX.Element {
  const { kind = 'plain', busy, disabled, type, class: extra, ...rest } = props;
  const classes = `btn btn-${kind}${typeof extra === 'string' && extra !== '' ? ` ${extra}` : ''}`;
  return <button type={(type as 'button' | 'submit' | undefined) ?? 'button'} class={classes} disabled={disabled === true || busy === true} aria-busy={busy === true} {...rest} />;
}

/** A label above its control; `hint` says what to enter. */
export function Field(props: { label: string; hint?: ComponentChildren; children: (id: string) => ComponentChildren }): JSX.Element {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id)}
      {props.hint !== undefined && <small class="muted">{props.hint}</small>}
    </div>
  );
}

export function TextField(props: { label: string; value: string; onInput: (v: string) => void; hint?: ComponentChildren; type?: string; placeholder?: string; required?: boolean; autoComplete?: string; name?: string }): JSX.Element {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id) => (
        <input
          id={id}
          name={props.name}
          type={props.type ?? 'text'}
          step={props.type === 'number' ? 'any' : undefined}
          value={props.value}
          placeholder={props.placeholder}
          required={props.required}
          autoComplete={props.autoComplete ?? 'off'}
          onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
        />
      )}
    </Field>
  );
}

export function SelectField(props: { label: string; value: string; options: Array<[value: string, label: string]>; onChange: (v: string) => void; hint?: ComponentChildren }): JSX.Element {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id) => (
        <select id={id} value={props.value} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}>
          {props.options.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function TextArea(props: { label: string; value: string; onInput: (v: string) => void; rows?: number; hint?: ComponentChildren; invalid?: boolean; mono?: boolean }): JSX.Element {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id) => (
        <textarea
          id={id}
          rows={props.rows ?? 6}
          class={props.mono === true ? 'mono' : undefined}
          spellcheck={false}
          aria-invalid={props.invalid === true}
          value={props.value}
          onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
        />
      )}
    </Field>
  );
}

export function Checkbox(props: { label: string; checked: boolean; onChange: (v: boolean) => void }): JSX.Element {
  return (
    <label class="check">
      <input type="checkbox" checked={props.checked} onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)} />
      {props.label}
    </label>
  );
}

/** A modal dialog (the native `<dialog>`: focus is trapped and Escape closes it). */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; wide?: boolean }): JSX.Element | null {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (el === null) return;
    if (props.open && !el.open) el.showModal();
    if (!props.open && el.open) el.close();
  }, [props.open]);
  if (!props.open) return null;
  return (
    <dialog ref={ref} class={props.wide === true ? 'wide' : undefined} aria-label={props.title} onClose={props.onClose}>
      <header class="card-head">
        <h2>{props.title}</h2>
        <Button aria-label="Close" onClick={props.onClose}>
          ✕
        </Button>
      </header>
      {props.children}
    </dialog>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }): JSX.Element {
  const [done, setDone] = useState(false);
  return (
    <Button
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Clipboard refused (no permission, no secure context): select-and-copy still works.
        }
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </Button>
  );
}

/** A secret shown once, with copy, and the warning that it will not be shown again. */
export function SecretOnce({ label, secret }: { label: string; secret: string }): JSX.Element {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong> It is shown only this once: copy it now.
      </p>
      <div class="row">
        <code class="secret-value" data-testid="secret">
          {secret}
        </code>
        <CopyButton text={secret} />
      </div>
    </div>
  );
}

// ── tables ───────────────────────────────────────────────────────────────────────────────────

export interface Column<T> {
  label: string;
  render: (row: T) => ComponentChildren;
  class?: string;
}

export function Table<T>(props: { caption: string; columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string; empty?: ComponentChildren }): JSX.Element {
  if (props.rows.length === 0 && props.empty !== undefined) return <>{props.empty}</>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" class={c.class} key={c.label}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((c) => (
                <td class={c.class} data-label={c.label} key={c.label}>
                  {c.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Pager(props: { page: number; pageSize: number; total: number; onPage: (page: number) => void }): JSX.Element | null {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <Button disabled={props.page <= 0} onClick={() => props.onPage(props.page - 1)}>
        Previous
      </Button>
      <span>
        Page {props.page + 1} of {pages}
      </span>
      <Button disabled={props.page + 1 >= pages} onClick={() => props.onPage(props.page + 1)}>
        Next
      </Button>
    </nav>
  );
}

/** Usage against a limit, as a bar with its numbers. */
export function UsageBar(props: { label: string; value: number; max: number; unit?: string; format?: (n: number) => string }): JSX.Element {
  const format = props.format ?? fmtNumber;
  const ratio = props.max > 0 ? Math.min(1, props.value / props.max) : 0;
  const level = ratio >= 1 ? 'full' : ratio >= 0.8 ? 'high' : 'ok';
  return (
    <div class="usage">
      <meter class={`meter-${level}`} min={0} max={props.max} value={Math.min(props.value, props.max)} low={props.max * 0.8} high={props.max * 0.99} optimum={0} aria-label={props.label} />
      <span class="muted">
        {format(props.value)} / {format(props.max)}
        {props.unit !== undefined ? ` ${props.unit}` : ''}
      </span>
    </div>
  );
}

export function Badge(props: { tone?: 'ok' | 'warn' | 'bad' | 'plain'; children: ComponentChildren }): JSX.Element {
  return <span class={`badge badge-${props.tone ?? 'plain'}`}>{props.children}</span>;
}

export function StatusBadge({ status }: { status: number }): JSX.Element {
  return <Badge tone={status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok'}>{status}</Badge>;
}

export function Json({ value }: { value: unknown }): JSX.Element {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

// ── formats ──────────────────────────────────────────────────────────────────────────────────

export const fmtNumber = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: 2 }));
/** Cents (the API's cost unit) as dollars. */
export const fmtCost = (cents: number | null | undefined): string =>
  cents === null || cents === undefined ? '—' : `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: cents < 100 ? 4 : 2 })}`;
export const fmtMs = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '—' : ms < 10 ? `${ms.toFixed(2)} ms` : `${Math.round(ms).toLocaleString('en-US')} ms`);
export const fmtPct = (p: number | null | undefined): string => (p === null || p === undefined ? '—' : `${p.toFixed(p < 10 ? 1 : 0)} %`);
export function fmtTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });
}

/** Scopes grouped by resource: `configs.create, configs.read` → `Configs: create, read`. */
export function groupScopes(scopes: string[]): Array<[group: string, actions: string[], scopes: string[]]> {
  const groups = new Map<string, [string[], string[]]>();
  for (const scope of [...scopes].sort()) {
    const dot = scope.lastIndexOf('.');
    const resource = dot === -1 ? scope : scope.slice(0, dot);
    const name = resource.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
    const group = groups.get(name) ?? [[], []];
    group[0].push(dot === -1 ? scope : scope.slice(dot + 1));
    group[1].push(scope);
    groups.set(name, group);
  }
  return [...groups].map(([name, [actions, full]]) => [name, actions, full]);
}

export function ScopeGroups({ scopes }: { scopes: string[] }): JSX.Element {
  return (
    <dl class="scopes">
      {groupScopes(scopes).map(([group, actions]) => (
        <div key={group}>
          <dt>{group}</dt>
          <dd>{actions.join(', ')}</dd>
        </div>
      ))}
    </dl>
  );
}
