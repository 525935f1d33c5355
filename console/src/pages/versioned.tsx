/**
 * Versioned resources: JSON bodies saved under a slug, each save a new version (configs,
 * guardrails). One page serves each of them, described by a {@link VersionedKind}: the list
 * (`#/<route>`, by workspace and status; delete archives, the versions stay; restore
 * re-activates), a new one (`#/<route>/new`) and one resource's editor with its version history
 * and diffs (`#/<route>/<slug>`, see versioned-edit.tsx).
 */
import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { link, type Route } from '../router';
import { Button, Empty, ErrorNote, Loaded, Page, Pager, SelectField, Table, fmtTime, useAction, useLoad, useSession, type Column } from '../ui';
import { useWorkspaces } from './api-keys';
import { VersionedCreate, VersionedEdit } from './versioned-edit';
import { pretty, useJsonCheck, type JsonCheck, type Problem } from './versioned-json';
import './configs.css';

/** The fields every versioned resource has in the API's list. */
export interface VersionedItem {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
  status: 'active' | 'archived';
  version_id: string;
  created_at: string;
  last_updated_at: string;
}

/** The API's check of a body (its problems; nothing is written). */
export type Remote = (value: unknown, signal: AbortSignal) => Promise<Problem[]>;

/** The editor's hold on a resource's JSON body. */
export interface BodyState {
  text: string;
  setText: (text: string) => void;
  check: JsonCheck;
  /** The body to send (called once the check allows saving). */
  body: () => unknown;
  /** Input besides the text that a save would send (typed header values). */
  touched: boolean;
  /** Controls after the JSON editor (not shown read-only). */
  fields?: ComponentChildren;
}

/** What makes one versioned resource: its API, route, scopes, words and body. */
export interface VersionedKind<I extends VersionedItem> {
  /** The admin API's collection: `/v1/configs` (and `/:slug`, `/:slug/versions`). */
  api: string;
  /** The console's route: `/configs`. */
  route: string;
  /** The scopes' resource: `configs` (`configs.create`, `.read`, `.update`, `.delete`). */
  scope: string;
  /** The resource in words, lower case: `config` / `configs` (the labels are made of them). */
  one: string;
  many: string;
  /** What it is, under each page's title. */
  help: ComponentChildren;
  /** The body's field in the API's create, update, detail and versions: `config`. */
  bodyKey: string;
  /** A new one's body. */
  starter: unknown;
  /**
   * The editor's state from a stored body (or the starter); `remote` is the API's check when the
   * key may use it, `deps` what else re-runs the check. See {@link jsonBody}.
   */
  useBody: (stored: unknown, remote: Remote | undefined, deps: unknown[]) => BodyState;
  /** The API's check of a body in a workspace, if the resource has one. */
  validate?: (workspaceId: string | undefined) => Remote;
  /** A stored body as the history shows it (default: as stored). */
  shown?: (stored: unknown) => unknown;
  /**
   * The editor's text alone is the body (no write-only parts): the editor offers "Discard
   * changes" and an old version "Load into the editor".
   */
  plainText?: boolean;
  editor: { id: string; label: string; hint: string; historyLabel: string; help?: ComponentChildren };
  create: {
    namePlaceholder: string;
    slugPlaceholder: string;
    slugHint: string;
    /** More fields of a new one (after name, slug and workspace) and what they add to its body. */
    useExtra?: () => { fields: ComponentChildren; body: Record<string, unknown> };
  };
  list: {
    /** The column between Workspace and Updated. */
    column: Column<I>;
    /** What to do when there is none yet (for a key that may create). */
    emptyHint: string;
    /** The question before a delete. */
    deleteWarning: (item: I) => string;
  };
  facts?: {
    /** After the slug. */
    slugNote?: (item: I) => ComponentChildren;
    /** After the status badge. */
    badges?: (item: I) => ComponentChildren;
  };
}

/** The body of a stored resource or version, under the kind's `bodyKey`. */
export const bodyOf = (record: object, key: string): unknown => (record as Record<string, unknown>)[key];

/** `config` → `Config`. */
export const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** The editor's state of a body that is plain JSON, checked by `shape` and then the API. */
export function jsonBody(shape: (value: unknown) => Problem[]): VersionedKind<VersionedItem>['useBody'] {
  return function useJsonBody(stored, remote, deps) {
    const [text, setText] = useState(() => pretty(stored));
    const check = useJsonCheck(text, shape, remote, deps);
    return { text, setText, check, body: () => check.value, touched: false };
  };
}

/** `#/<route>`, `#/<route>/new` and `#/<route>/<slug>`. */
export function VersionedPage<I extends VersionedItem>({ kind, route }: { kind: VersionedKind<I>; route: Route }): JSX.Element {
  const sub = route.parts[1];
  if (sub === undefined) return <VersionedList kind={kind} />;
  if (sub === 'new') return <VersionedCreate kind={kind} />;
  return <VersionedEdit kind={kind} slug={sub} key={sub} />;
}

const PAGE_SIZE = 25;

function VersionedList<I extends VersionedItem>({ kind }: { kind: VersionedKind<I> }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [workspace, setWorkspace] = useState('');
  const [status, setStatus] = useState<'active' | 'archived'>('active');
  const [page, setPage] = useState(0);
  const list = useLoad(
    (signal) => api.get<ListPage<I>>(kind.api, { workspace_id: workspace || undefined, status, current_page: page, page_size: PAGE_SIZE }, signal),
    [workspace, status, page],
  );
  const change = useAction(async (item: I, to: 'archive' | 'restore') => {
    if (to === 'archive') {
      if (!confirm(kind.list.deleteWarning(item))) return;
      await api.del(`${kind.api}/${encodeURIComponent(item.slug)}`);
    } else {
      await api.put(`${kind.api}/${encodeURIComponent(item.slug)}`, { status: 'active' });
    }
    list.reload();
  });
  const wsName = (id: string): string => workspaces.list.find((w) => w.id === id)?.slug ?? id;
  const can = (action: string): boolean => session.can(`${kind.scope}.${action}`);
  const canCreate = can('create');
  const title = capital(kind.many);
  return (
    <Page
      title={title}
      description={kind.help}
      actions={
        canCreate && (
          <a class="btn btn-primary" href={link(`${kind.route}/new`)}>
            {`New ${kind.one}`}
          </a>
        )
      }
    >
      <div class="filters">
        {session.isOrganisation && workspaces.list.length > 0 && (
          <SelectField
            label="Workspace"
            value={workspace}
            onChange={(v) => { setWorkspace(v); setPage(0); }}
            options={[['', 'All workspaces'], ...workspaces.list.map((w): [string, string] => [w.id, w.slug])]}
          />
        )}
        <SelectField
          label="Status"
          value={status}
          onChange={(v) => { setStatus(v as 'active' | 'archived'); setPage(0); }}
          options={[['active', 'Active'], ['archived', 'Deleted (archived)']]}
        />
      </div>
      <ErrorNote error={change.error} />
      <Loaded state={list}>
        {(found) => (
          <>
            <Table
              caption={title}
              rows={found.data}
              rowKey={(item) => item.id}
              empty={
                <Empty title={status === 'active' ? `No ${kind.many} yet.` : `No deleted ${kind.many}.`}>
                  {status === 'active' && (canCreate ? kind.list.emptyHint : `This key may not create ${kind.many}.`)}
                </Empty>
              }
              columns={[
                { label: 'Name', render: (item) => (can('read') ? <a href={link(`${kind.route}/${encodeURIComponent(item.slug)}`)}>{item.name}</a> : item.name) },
                { label: 'Slug', render: (item) => <code>{item.slug}</code> },
                { label: 'Workspace', render: (item) => wsName(item.workspace_id) },
                kind.list.column,
                { label: 'Updated', render: (item) => fmtTime(item.last_updated_at) },
                {
                  label: 'Actions',
                  render: (item) =>
                    item.status === 'active'
                      ? can('delete') && (
                          <Button kind="danger" aria-label={`Delete ${item.name}`} busy={change.busy} onClick={() => void change.run(item, 'archive')}>
                            Delete
                          </Button>
                        )
                      : can('update') && (
                          <Button aria-label={`Restore ${item.name}`} busy={change.busy} onClick={() => void change.run(item, 'restore')}>
                            Restore
                          </Button>
                        ),
                },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={found.total} onPage={setPage} />
          </>
        )}
      </Loaded>
    </Page>
  );
}
