/**
 * One routing config: a new one (name, slug, workspace, a starter fallback between two targets)
 * or an existing one (save = a new version), edited as JSON checked as you type (locally, then by
 * `POST /v1/configs/validate`; Save stays disabled while the config is not valid), with its
 * version history, any version opened in full, and a diff between two versions.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, request, type ListPage } from '../api';
import { link, navigate } from '../router';
import { Badge, Button, Checkbox, ErrorNote, Loaded, Page, SelectField, Section, TextField, fmtTime, useAction, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { JsonEditor, pretty, problemOf, useJsonCheck, type JsonCheck, type Problem } from './configs-json';
import { VersionDiff, VersionHistory, type Version } from './configs-versions';

export interface ConfigItem {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
  is_default: number;
  status: 'active' | 'archived';
  version_id: string;
  created_at: string;
  last_updated_at: string;
}

interface ConfigDetail extends ConfigItem {
  config: Record<string, unknown>;
}

interface ConfigVersion extends Version {
  id: string;
  slug: string;
  config: Record<string, unknown>;
}

/** What a config is, for the list and the editor. */
export const CONFIG_HELP = (
  <>
    A config says where a model call goes: one or more <em>targets</em> (a provider, a virtual key or a nested group), how to choose among them (
    <code>single</code>, <code>fallback</code>, <code>loadbalance</code>, <code>conditional</code>), and retries, timeouts, caching and parameter
    overrides. Apps use a saved config by sending its slug in the <code>x-gateway-config</code> header, or through an API key's default config.
  </>
);

/** A new config starts as a fallback between two targets (virtual keys hold the provider keys). */
export const STARTER_CONFIG = {
  strategy: { mode: 'fallback', on_status_codes: [429, 500, 502, 503, 504] },
  retry: { attempts: 2, on_status_codes: [429, 503] },
  request_timeout: 30000,
  targets: [{ virtual_key: 'openai-main' }, { virtual_key: 'openai-backup', override_params: { model: 'gpt-4o-mini' } }],
};

const EDITOR_HINT =
  'The routing config as JSON. Provider keys are shown masked: leave a mask as it is to keep the stored key. Checked as you type; Save is enabled once it is valid.';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function configShape(value: unknown): Problem[] {
  return isObject(value) ? [] : [{ path: 'config', message: 'A config is a JSON object: { "strategy": …, "targets": [ … ] }.', code: 'invalid_type' }];
}

/** The API's check of a config (the checks of a save; nothing is written). */
function validateRemote(workspaceId: string | undefined) {
  return async (value: unknown, signal: AbortSignal): Promise<Problem[]> => {
    const body: Record<string, unknown> = { config: value };
    if (workspaceId !== undefined && workspaceId !== '') body.workspace_id = workspaceId;
    const r = await request<{ valid: boolean; errors?: Problem[] }>('POST', '/v1/configs/validate', body, { signal });
    return r.valid ? [] : r.errors ?? [{ path: 'config', message: 'The gateway refused this config.', code: 'invalid_config' }];
  };
}

const canSave = (check: JsonCheck): boolean => check.state === 'valid' || check.state === 'unchecked';

export function ConfigCreate(): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [workspace, setWorkspace] = useState(session.principal.workspace_id ?? '');
  const [isDefault, setDefault] = useState(false);
  const [text, setText] = useState(pretty(STARTER_CONFIG));
  // An organisation key picks the workspace; until the list is there, the default workspace.
  const wsId = session.isOrganisation ? workspace || workspaces.list[0]?.id : undefined;
  const validate = session.can('configs.create') ? validateRemote(wsId) : undefined;
  const check = useJsonCheck(text, configShape, validate, [wsId]);
  const save = useAction(async () => {
    const body: Record<string, unknown> = { name: name.trim(), config: check.value };
    if (slug.trim() !== '') body.slug = slug.trim();
    if (wsId !== undefined) body.workspace_id = wsId;
    if (isDefault) body.is_default = 1;
    const made = await api.post<{ slug: string }>('/v1/configs', body);
    navigate(`/configs/${encodeURIComponent(made.slug)}`);
  });
  const problem = problemOf(save.error);
  return (
    <Page title="New config" description={CONFIG_HELP} actions={<a href={link('/configs')}>Back to configs</a>}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required placeholder="Production chat" />
          <TextField label="Slug (optional)" value={slug} onInput={setSlug} placeholder="prod-chat" hint="What apps send in x-gateway-config. Left empty: made from the name." />
          {session.isOrganisation && workspaces.list.length > 0 && (
            <SelectField label="Workspace" value={wsId ?? ''} onChange={setWorkspace} options={workspaces.list.map((w): [string, string] => [w.id, w.slug])} />
          )}
        </div>
        <Checkbox label="Default config of the workspace (used when a request names none)" checked={isDefault} onChange={setDefault} />
        <JsonEditor
          label="Config JSON"
          value={text}
          onInput={(v) => {
            setText(v);
            save.clear();
          }}
          check={check}
          hint={EDITOR_HINT}
          saveProblem={problem}
        />
        {problem === undefined && <ErrorNote error={save.error} />}
        <div class="row end">
          <a class="btn" href={link('/configs')}>
            Cancel
          </a>
          <Button kind="primary" type="submit" busy={save.busy} disabled={name.trim() === '' || !canSave(check)}>
            Save config
          </Button>
        </div>
      </form>
    </Page>
  );
}

export function ConfigEdit({ slug }: { slug: string }): JSX.Element {
  const session = useSession();
  const path = `/v1/configs/${encodeURIComponent(slug)}`;
  const detail = useLoad((signal) => api.get<ConfigDetail>(path, undefined, signal), [slug]);
  const versions = useLoad((signal) => api.get<ListPage<ConfigVersion>>(`${path}/versions`, { page_size: 100 }, signal), [slug]);
  // "Load into the editor" of an old version: a fresh object each time, so loading twice works.
  const [restored, setRestored] = useState<{ text: string } | undefined>(undefined);
  // The editor starts over from each saved version (provider keys masked again, as stored).
  const [saved, setSaved] = useState<string | undefined>(undefined);
  return (
    <Page title={detail.data?.name ?? 'Config'} description={CONFIG_HELP} actions={<a href={link('/configs')}>Back to configs</a>}>
      <Loaded state={detail}>
        {(config) => (
          <ConfigEditor
            key={config.version_id}
            config={config}
            versionCount={versions.data?.total}
            restored={restored}
            justSaved={saved === config.version_id}
            onSaved={(versionId) => {
              setSaved(versionId);
              setRestored(undefined);
              detail.reload();
              versions.reload();
            }}
          />
        )}
      </Loaded>
      <Section title="Version history">
        <Loaded state={versions}>{(list) => <History versions={list.data} onRestore={session.can('configs.update') ? (text) => setRestored({ text }) : undefined} />}</Loaded>
      </Section>
    </Page>
  );
}

function History({ versions, onRestore }: { versions: ConfigVersion[]; onRestore: ((text: string) => void) | undefined }): JSX.Element {
  const body = (v: ConfigVersion): unknown => v.config;
  return (
    <>
      <VersionHistory versions={versions} body={body} bodyLabel="Config" onRestore={onRestore === undefined ? undefined : (v) => onRestore(pretty(v.config))} />
      <h3>Compare versions</h3>
      <VersionDiff versions={versions} body={body} bodyKey="config" />
    </>
  );
}

function ConfigEditor(props: { config: ConfigDetail; versionCount: number | undefined; restored: { text: string } | undefined; justSaved: boolean; onSaved: (versionId: string) => void }): JSX.Element {
  const session = useSession();
  const c = props.config;
  const canUpdate = session.can('configs.update') && c.status === 'active';
  const [name, setName] = useState(c.name);
  const [baseline] = useState(() => pretty(c.config));
  const [text, setText] = useState(baseline);
  useEffect(() => {
    if (props.restored === undefined || !canUpdate) return;
    setText(props.restored.text);
    document.getElementById('config-json')?.focus();
  }, [props.restored]);
  const validate = session.can('configs.create') && canUpdate ? validateRemote(c.workspace_id) : undefined;
  const check = useJsonCheck(text, configShape, validate);
  const dirty = name !== c.name || text !== baseline;
  const save = useAction(async () => {
    const body: Record<string, unknown> = { config: check.value };
    if (name.trim() !== c.name) body.name = name.trim();
    const r = await api.put<{ version_id: string }>(`/v1/configs/${encodeURIComponent(c.slug)}`, body);
    props.onSaved(r.version_id);
  });
  const problem = problemOf(save.error);
  return (
    <>
      <dl class="facts config-facts">
        <dt>Slug</dt>
        <dd>
          <code>{c.slug}</code> <span class="muted">— send </span>
          <code>x-gateway-config: {c.slug}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge tone={c.status === 'active' ? 'ok' : 'bad'}>{c.status}</Badge> {c.is_default === 1 && <Badge tone="ok">default</Badge>}
        </dd>
        <dt>Versions</dt>
        <dd>{props.versionCount ?? '…'}</dd>
        <dt>Updated</dt>
        <dd>{fmtTime(c.last_updated_at)}</dd>
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
          <p class="muted">{c.status === 'active' ? 'This key may read this config but not change it.' : 'A deleted config cannot be edited; restore it from the list first.'}</p>
        )}
        <JsonEditor
          id="config-json"
          label="Config JSON"
          value={text}
          onInput={(v) => {
            setText(v);
            save.clear();
          }}
          check={check}
          hint={EDITOR_HINT}
          saveProblem={problem}
          readOnly={!canUpdate}
        />
        {problem === undefined && <ErrorNote error={save.error} />}
        {canUpdate && (
          <div class="row end">
            {props.justSaved && !dirty && (
              <span role="status" class="muted">
                Saved as a new version.
              </span>
            )}
            <Button disabled={!dirty} onClick={() => { setText(baseline); setName(c.name); }}>
              Discard changes
            </Button>
            <Button kind="primary" type="submit" busy={save.busy} disabled={!dirty || name.trim() === '' || !canSave(check)}>
              Save new version
            </Button>
          </div>
        )}
      </form>
    </>
  );
}
