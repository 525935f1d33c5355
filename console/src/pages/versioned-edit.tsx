/**
 * A versioned resource's editor: a new one (name, slug, workspace, its starter body) or an
 * existing one (save = a new version), its body edited as JSON checked as you type (locally,
 * then by the API's check where the resource has one; Save stays disabled while the body is not
 * valid), with its version history, any version opened in full, and a diff between two versions.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { link, navigate } from '../router';
import { Badge, Button, ErrorNote, Loaded, Page, SelectField, Section, TextField, fmtTime, useAction, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { VersionDiff, VersionHistory, type Version } from './versioned-history';
import { JsonEditor, pretty, problemOf, type JsonCheck } from './versioned-json';
import { bodyOf, capital, type BodyState, type VersionedItem, type VersionedKind } from './versioned';

/** `unchecked`: the API could not check it; the save will. */
const canSave = (check: JsonCheck): boolean => check.state === 'valid' || check.state === 'unchecked';

/** The JSON editor of the body, the kind's fields after it, the save's error and the kind's help. */
function BodyEditor<I extends VersionedItem>(props: { kind: VersionedKind<I>; body: BodyState; saveError: unknown; onEdit: () => void; readOnly?: boolean }): JSX.Element {
  const { kind, body } = props;
  const problem = problemOf(props.saveError);
  return (
    <>
      <JsonEditor
        id={kind.editor.id}
        label={kind.editor.label}
        value={body.text}
        onInput={(v) => {
          body.setText(v);
          props.onEdit();
        }}
        check={body.check}
        hint={kind.editor.hint}
        saveProblem={problem}
        readOnly={props.readOnly}
      />
      {props.readOnly !== true && body.fields}
      {problem === undefined && <ErrorNote error={props.saveError} />}
      {kind.editor.help}
    </>
  );
}

const noExtra = (): { fields: undefined; body: Record<string, unknown> } => ({ fields: undefined, body: {} });

export function VersionedCreate<I extends VersionedItem>({ kind }: { kind: VersionedKind<I> }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [workspace, setWorkspace] = useState('');
  const extra = (kind.create.useExtra ?? noExtra)();
  // An organisation key picks the workspace; until the list is there, the default workspace.
  const wsId = session.isOrganisation ? workspace || workspaces.list[0]?.id : undefined;
  const remote = kind.validate !== undefined && session.can(`${kind.scope}.create`) ? kind.validate(wsId) : undefined;
  const body = kind.useBody(kind.starter, remote, kind.validate !== undefined ? [wsId] : []);
  const save = useAction(async () => {
    const sent: Record<string, unknown> = { name: name.trim(), [kind.bodyKey]: body.body() };
    if (slug.trim() !== '') sent.slug = slug.trim();
    if (wsId !== undefined) sent.workspace_id = wsId;
    Object.assign(sent, extra.body);
    const made = await api.post<{ slug: string }>(kind.api, sent);
    navigate(`${kind.route}/${encodeURIComponent(made.slug)}`);
  });
  return (
    <Page title={`New ${kind.one}`} description={kind.help} actions={<a href={link(kind.route)}>{`Back to ${kind.many}`}</a>}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required placeholder={kind.create.namePlaceholder} />
          <TextField label="Slug (optional)" value={slug} onInput={setSlug} placeholder={kind.create.slugPlaceholder} hint={kind.create.slugHint} />
          {session.isOrganisation && workspaces.list.length > 0 && (
            <SelectField label="Workspace" value={wsId ?? ''} onChange={setWorkspace} options={workspaces.list.map((w): [string, string] => [w.id, w.slug])} />
          )}
        </div>
        {extra.fields}
        <BodyEditor kind={kind} body={body} saveError={save.error} onEdit={save.clear} />
        <div class="row end">
          <a class="btn" href={link(kind.route)}>
            Cancel
          </a>
          <Button kind="primary" type="submit" busy={save.busy} disabled={name.trim() === '' || !canSave(body.check)}>
            {`Save ${kind.one}`}
          </Button>
        </div>
      </form>
    </Page>
  );
}

export function VersionedEdit<I extends VersionedItem>({ kind, slug }: { kind: VersionedKind<I>; slug: string }): JSX.Element {
  const session = useSession();
  const path = `${kind.api}/${encodeURIComponent(slug)}`;
  const detail = useLoad((signal) => api.get<I>(path, undefined, signal), [slug]);
  const versions = useLoad((signal) => api.get<ListPage<Version>>(`${path}/versions`, { page_size: 100 }, signal), [slug]);
  // "Load into the editor" of an old version: a fresh object each time, so loading twice works.
  const [restored, setRestored] = useState<{ text: string } | undefined>(undefined);
  // The editor starts over from each saved version (secrets masked again, as stored).
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const shown = (v: Version): unknown => {
    const stored = bodyOf(v, kind.bodyKey);
    return kind.shown === undefined ? stored : kind.shown(stored);
  };
  const onRestore = kind.plainText === true && session.can(`${kind.scope}.update`) ? (v: Version) => setRestored({ text: pretty(shown(v)) }) : undefined;
  return (
    <Page title={detail.data?.name ?? capital(kind.one)} description={kind.help} actions={<a href={link(kind.route)}>{`Back to ${kind.many}`}</a>}>
      <Loaded state={detail}>
        {(item) => (
          <Editor
            key={item.version_id}
            kind={kind}
            item={item}
            versionCount={versions.data?.total}
            restored={restored}
            justSaved={saved === item.version_id}
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
        <Loaded state={versions}>
          {(list) => (
            <>
              <VersionHistory versions={list.data} body={shown} bodyLabel={kind.editor.historyLabel} onRestore={onRestore} />
              <h3>Compare versions</h3>
              <VersionDiff versions={list.data} body={shown} bodyKey={kind.bodyKey} />
            </>
          )}
        </Loaded>
      </Section>
    </Page>
  );
}

function Editor<I extends VersionedItem>(props: {
  kind: VersionedKind<I>;
  item: I;
  versionCount: number | undefined;
  restored: { text: string } | undefined;
  justSaved: boolean;
  onSaved: (versionId: string) => void;
}): JSX.Element {
  const session = useSession();
  const { kind, item: c } = props;
  const canUpdate = session.can(`${kind.scope}.update`) && c.status === 'active';
  const [name, setName] = useState(c.name);
  const remote = kind.validate !== undefined && session.can(`${kind.scope}.create`) && canUpdate ? kind.validate(c.workspace_id) : undefined;
  const body = kind.useBody(bodyOf(c, kind.bodyKey), remote, kind.validate !== undefined ? [c.workspace_id] : []);
  const [baseline] = useState(body.text);
  useEffect(() => {
    if (props.restored === undefined || !canUpdate) return;
    body.setText(props.restored.text);
    document.getElementById(kind.editor.id)?.focus();
  }, [props.restored]);
  const dirty = name !== c.name || body.text !== baseline || body.touched;
  const save = useAction(async () => {
    const sent: Record<string, unknown> = { [kind.bodyKey]: body.body() };
    if (name.trim() !== c.name) sent.name = name.trim();
    const r = await api.put<{ version_id: string }>(`${kind.api}/${encodeURIComponent(c.slug)}`, sent);
    props.onSaved(r.version_id);
  });
  const slugNote = kind.facts?.slugNote;
  const badges = kind.facts?.badges;
  return (
    <>
      <dl class="facts config-facts">
        <dt>Slug</dt>
        <dd>
          <code>{c.slug}</code>
          {slugNote !== undefined && <> {slugNote(c)}</>}
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge tone={c.status === 'active' ? 'ok' : 'bad'}>{c.status}</Badge>
          {badges !== undefined && <> {badges(c)}</>}
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
          <p class="muted">{c.status === 'active' ? `This key may read this ${kind.one} but not change it.` : `A deleted ${kind.one} cannot be edited; restore it from the list first.`}</p>
        )}
        <BodyEditor kind={kind} body={body} saveError={save.error} onEdit={save.clear} readOnly={!canUpdate} />
        {canUpdate && (
          <div class="row end">
            {props.justSaved && !dirty && (
              <span role="status" class="muted">
                Saved as a new version.
              </span>
            )}
            {kind.plainText === true && (
              <Button disabled={!dirty} onClick={() => { body.setText(baseline); setName(c.name); }}>
                Discard changes
              </Button>
            )}
            <Button kind="primary" type="submit" busy={save.busy} disabled={!dirty || name.trim() === '' || !canSave(body.check)}>
              Save new version
            </Button>
          </div>
        )}
      </form>
    </>
  );
}
