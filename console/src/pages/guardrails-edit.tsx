/**
 * One saved guardrail: a new one (name, slug, workspace, a starter word-count check) or an
 * existing one (save = a new version), its checks edited as JSON. The JSON is checked locally as
 * you type (syntax with line and column, the list's shape); the check ids and parameters are
 * checked by the API on save, and its 400 is shown with message, code and path. Header values
 * are write-only (guardrails-headers.tsx). Version history and diffs as for configs.
 */
import { Fragment, type ComponentChildren, type JSX } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { link, navigate } from '../router';
import { Badge, Button, ErrorNote, Loaded, Page, SelectField, Section, TextField, fmtTime, useAction, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { JsonEditor, pretty, problemOf, useJsonCheck, type JsonCheck, type Problem } from './configs-json';
import { VersionDiff, VersionHistory, type Version } from './configs-versions';
import { HeaderFields, headerProblems, hideHeaders, withHeaders } from './guardrails-headers';

export interface GuardrailItem {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
  status: 'active' | 'archived';
  version_id: string;
  created_at: string;
  last_updated_at: string;
}

interface GuardrailDetail extends GuardrailItem {
  checks: unknown[];
}

interface GuardrailVersion extends Version {
  id: string;
  slug: string;
  checks: unknown[];
}

export const GUARDRAIL_HELP: ComponentChildren = (
  <>
    A guardrail is a named list of checks run on requests or answers (word counts, patterns, PII, JSON shape, your own webhook), each with what to
    do when it fails (<code>deny</code>, <code>redact</code>, <code>async</code>). Configs, API keys and workspaces name it by slug in their{' '}
    <code>input_guardrails</code> / <code>output_guardrails</code>.
  </>
);

const STARTER_CHECKS = [{ 'default.wordCount': { min: 1, max: 2000 }, deny: true }];

const MAX_GUARDRAILS = 32;

const CHECK_EXAMPLES: Array<[string, string]> = [
  ['default.wordCount / sentenceCount / characterCount', '{"min": 1, "max": 500}'],
  ['default.regexMatch', '{"rule": "\\\\d{16}", "not": true}'],
  ['default.contains', '{"words": ["secret"], "operator": "none"}'],
  ['default.pii, default.secrets', 'detect personal data or credentials; with "redact": true they are masked'],
  ['default.jsonSchema', '{"schema": {…}} on answers'],
  ['default.modelWhitelist', '{"models": ["gpt-4o-mini"]}'],
  ['default.webhook', `{"webhookURL": "https://…", "headers": {"Authorization": "[secret]"}}`],
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The list's shape, as the API's body schema says it (the registry checks the rest on save). */
function checksShape(value: unknown): Problem[] {
  if (!Array.isArray(value)) return [{ path: 'checks', message: 'The checks are a JSON array of guardrail objects: [ {"default.wordCount": {…}, "deny": true} ].', code: 'invalid_type' }];
  if (value.length === 0 || value.length > MAX_GUARDRAILS) return [{ path: 'checks', message: `Between 1 and ${MAX_GUARDRAILS} guardrail objects.`, code: 'invalid_value' }];
  return value.flatMap((g, i): Problem[] =>
    isObject(g) ? [] : [{ path: `checks[${i}]`, message: 'Each entry is an object of check ids and action keys (saved guardrails do not nest).', code: 'invalid_type' }],
  );
}

const canSave = (check: JsonCheck): boolean => check.state === 'valid';

function CheckHelp(): JSX.Element {
  return (
    <details class="check-help">
      <summary>Checks you can use</summary>
      <dl class="facts">
        {CHECK_EXAMPLES.map(([id, params]) => (
          <Fragment key={id}>
            <dt>
              <code>{id}</code>
            </dt>
            <dd>
              <code>{params}</code>
            </dd>
          </Fragment>
        ))}
      </dl>
      <p class="muted">
        Action keys beside the checks: <code>deny</code>, <code>redact</code>, <code>async</code>, <code>on_error</code> (<code>allow</code> or{' '}
        <code>block</code>), <code>timeout</code>, <code>on_fail</code>, <code>on_success</code>, <code>id</code>, <code>name</code>.
      </p>
    </details>
  );
}

/** The JSON editor of the checks, with the header fields and the API's save error. */
function ChecksEditor(props: {
  text: string;
  onText: (v: string) => void;
  typed: Record<string, string>;
  onTyped: (v: Record<string, string>) => void;
  masks: Map<string, string>;
  check: JsonCheck;
  saveError: unknown;
  /** Forgets the save's error once the text changes (it was about the old text). */
  onEdit: () => void;
  readOnly?: boolean;
}): JSX.Element {
  const problem = problemOf(props.saveError);
  return (
    <>
      <JsonEditor
        id="guardrail-json"
        label="Checks JSON"
        value={props.text}
        onInput={(v) => {
          props.onText(v);
          props.onEdit();
        }}
        check={props.check}
        saveProblem={problem}
        readOnly={props.readOnly}
        hint="A JSON array of guardrail objects. Checked for shape as you type; the gateway checks every check id and parameter when you save."
      />
      {props.readOnly !== true && <HeaderFields checks={props.check.value} typed={props.typed} masks={props.masks} onChange={props.onTyped} />}
      {problem === undefined && <ErrorNote error={props.saveError} />}
      <CheckHelp />
    </>
  );
}

/** The editor's state: text, typed header values, and the check of both. */
function useChecksState(initial: unknown[], masks: Map<string, string>) {
  const [text, setText] = useState(pretty(initial));
  const [typed, setTyped] = useState<Record<string, string>>({});
  const shape = (value: unknown): Problem[] => {
    const problems = checksShape(value);
    return problems.length > 0 ? problems : headerProblems(value, typed, masks);
  };
  const check = useJsonCheck(text, shape, undefined, [typed]);
  const body = (): unknown[] => withHeaders(check.value as unknown[], typed, masks);
  return { text, setText, typed, setTyped, check, body };
}

export function GuardrailCreate(): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [workspace, setWorkspace] = useState('');
  const masks = useMemo(() => new Map<string, string>(), []);
  const state = useChecksState(STARTER_CHECKS, masks);
  const wsId = session.isOrganisation ? workspace || workspaces.list[0]?.id : undefined;
  const save = useAction(async () => {
    const body: Record<string, unknown> = { name: name.trim(), checks: state.body() };
    if (slug.trim() !== '') body.slug = slug.trim();
    if (wsId !== undefined) body.workspace_id = wsId;
    const made = await api.post<{ slug: string }>('/v1/guardrails', body);
    navigate(`/guardrails/${encodeURIComponent(made.slug)}`);
  });
  return (
    <Page title="New guardrail" description={GUARDRAIL_HELP} actions={<a href={link('/guardrails')}>Back to guardrails</a>}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required placeholder="No card numbers" />
          <TextField label="Slug (optional)" value={slug} onInput={setSlug} placeholder="no-cards" hint="How configs and keys name it. Left empty: made from the name." />
          {session.isOrganisation && workspaces.list.length > 0 && (
            <SelectField label="Workspace" value={wsId ?? ''} onChange={setWorkspace} options={workspaces.list.map((w): [string, string] => [w.id, w.slug])} />
          )}
        </div>
        <ChecksEditor text={state.text} onText={state.setText} typed={state.typed} onTyped={state.setTyped} masks={masks} check={state.check} saveError={save.error} onEdit={save.clear} />
        <div class="row end">
          <a class="btn" href={link('/guardrails')}>
            Cancel
          </a>
          <Button kind="primary" type="submit" busy={save.busy} disabled={name.trim() === '' || !canSave(state.check)}>
            Save guardrail
          </Button>
        </div>
      </form>
    </Page>
  );
}

export function GuardrailEdit({ slug }: { slug: string }): JSX.Element {
  const path = `/v1/guardrails/${encodeURIComponent(slug)}`;
  const detail = useLoad((signal) => api.get<GuardrailDetail>(path, undefined, signal), [slug]);
  const versions = useLoad((signal) => api.get<ListPage<GuardrailVersion>>(`${path}/versions`, { page_size: 100 }, signal), [slug]);
  const body = (v: GuardrailVersion): unknown => hideHeaders(v.checks).shown;
  // The editor starts over from each saved version: its masks must be those of the stored values.
  const [saved, setSaved] = useState<string | undefined>(undefined);
  return (
    <Page title={detail.data?.name ?? 'Guardrail'} description={GUARDRAIL_HELP} actions={<a href={link('/guardrails')}>Back to guardrails</a>}>
      <Loaded state={detail}>
        {(g) => (
          <GuardrailEditor
            key={g.version_id}
            guardrail={g}
            versionCount={versions.data?.total}
            justSaved={saved === g.version_id}
            onSaved={(versionId) => {
              setSaved(versionId);
              detail.reload();
              versions.reload();
            }}
          />
        )}
      </Loaded>
      <Section title="Version history">
        <Loaded state={versions}>
          {(list) => (
            <>
              <VersionHistory versions={list.data} body={body} bodyLabel="Checks (header values hidden)" />
              <h3>Compare versions</h3>
              <VersionDiff versions={list.data} body={body} bodyKey="checks" />
            </>
          )}
        </Loaded>
      </Section>
    </Page>
  );
}

function GuardrailEditor(props: { guardrail: GuardrailDetail; versionCount: number | undefined; justSaved: boolean; onSaved: (versionId: string) => void }): JSX.Element {
  const session = useSession();
  const g = props.guardrail;
  const canUpdate = session.can('guardrails.update') && g.status === 'active';
  const [{ shown, masks }] = useState(() => hideHeaders(g.checks));
  const state = useChecksState(shown, masks);
  const [name, setName] = useState(g.name);
  const [baseline] = useState(state.text);
  const typedAny = Object.values(state.typed).some((v) => v !== '');
  const dirty = name !== g.name || state.text !== baseline || typedAny;
  const save = useAction(async () => {
    const body: Record<string, unknown> = { checks: state.body() };
    if (name.trim() !== g.name) body.name = name.trim();
    const r = await api.put<{ version_id: string }>(`/v1/guardrails/${encodeURIComponent(g.slug)}`, body);
    props.onSaved(r.version_id);
  });
  return (
    <>
      <dl class="facts config-facts">
        <dt>Slug</dt>
        <dd>
          <code>{g.slug}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge tone={g.status === 'active' ? 'ok' : 'bad'}>{g.status}</Badge>
        </dd>
        <dt>Versions</dt>
        <dd>{props.versionCount ?? '…'}</dd>
        <dt>Updated</dt>
        <dd>{fmtTime(g.last_updated_at)}</dd>
      </dl>
      <form
        class="card config-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        {canUpdate ? (
          <TextField label="Name" value={name} onInput={setName} required />
        ) : (
          <p class="muted">{g.status === 'active' ? 'This key may read this guardrail but not change it.' : 'A deleted guardrail cannot be edited; restore it from the list first.'}</p>
        )}
        <ChecksEditor
          text={state.text}
          onText={state.setText}
          typed={state.typed}
          onTyped={state.setTyped}
          masks={masks}
          check={state.check}
          saveError={save.error}
          onEdit={save.clear}
          readOnly={!canUpdate}
        />
        {canUpdate && (
          <div class="row end">
            {props.justSaved && !dirty && (
              <span role="status" class="muted">
                Saved as a new version.
              </span>
            )}
            <Button kind="primary" type="submit" busy={save.busy} disabled={!dirty || name.trim() === '' || !canSave(state.check)}>
              Save new version
            </Button>
          </div>
        )}
      </form>
    </>
  );
}
