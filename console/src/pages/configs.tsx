/**
 * Configs: the saved routing configs (`#/configs`), a new one (`#/configs/new`) and one config's
 * editor with its version history and diffs (`#/configs/<slug>`, see configs-edit.tsx). The list
 * filters by workspace and status; delete archives (the versions stay), restore re-activates.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { link, type Route } from '../router';
import { Badge, Button, Empty, ErrorNote, Loaded, Page, Pager, SelectField, Table, fmtTime, useAction, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { CONFIG_HELP, ConfigCreate, ConfigEdit, type ConfigItem } from './configs-edit';
import './configs.css';

const PAGE_SIZE = 25;

export function Configs({ route }: { route: Route }): JSX.Element {
  const sub = route.parts[1];
  if (sub === undefined) return <ConfigList />;
  if (sub === 'new') return <ConfigCreate />;
  return <ConfigEdit slug={sub} key={sub} />;
}

function ConfigList(): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [workspace, setWorkspace] = useState('');
  const [status, setStatus] = useState<'active' | 'archived'>('active');
  const [page, setPage] = useState(0);
  const configs = useLoad(
    (signal) => api.get<ListPage<ConfigItem>>('/v1/configs', { workspace_id: workspace || undefined, status, current_page: page, page_size: PAGE_SIZE }, signal),
    [workspace, status, page],
  );
  const change = useAction(async (c: ConfigItem, to: 'archive' | 'restore') => {
    if (to === 'archive') {
      if (!confirm(`Delete the config “${c.name}”? Requests naming ${c.slug} fail from now on; its versions are kept.`)) return;
      await api.del(`/v1/configs/${encodeURIComponent(c.slug)}`);
    } else {
      await api.put(`/v1/configs/${encodeURIComponent(c.slug)}`, { status: 'active' });
    }
    configs.reload();
  });
  const wsName = (id: string): string => workspaces.list.find((w) => w.id === id)?.slug ?? id;
  const canCreate = session.can('configs.create');
  return (
    <Page
      title="Configs"
      description={CONFIG_HELP}
      actions={
        canCreate && (
          <a class="btn btn-primary" href={link('/configs/new')}>
            New config
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
      <Loaded state={configs}>
        {(list) => (
          <>
            <Table
              caption="Configs"
              rows={list.data}
              rowKey={(c) => c.id}
              empty={
                <Empty title={status === 'active' ? 'No configs yet.' : 'No deleted configs.'}>
                  {status === 'active' && (canCreate ? 'Create one with “New config”: it starts from a fallback between two targets.' : 'This key may not create configs.')}
                </Empty>
              }
              columns={[
                { label: 'Name', render: (c) => (session.can('configs.read') ? <a href={link(`/configs/${encodeURIComponent(c.slug)}`)}>{c.name}</a> : c.name) },
                { label: 'Slug', render: (c) => <code>{c.slug}</code> },
                { label: 'Workspace', render: (c) => wsName(c.workspace_id) },
                { label: 'Default', render: (c) => (c.is_default === 1 ? <Badge tone="ok">default</Badge> : <span class="muted">no</span>) },
                { label: 'Updated', render: (c) => fmtTime(c.last_updated_at) },
                {
                  label: 'Actions',
                  render: (c) =>
                    c.status === 'active'
                      ? session.can('configs.delete') && (
                          <Button kind="danger" aria-label={`Delete ${c.name}`} busy={change.busy} onClick={() => void change.run(c, 'archive')}>
                            Delete
                          </Button>
                        )
                      : session.can('configs.update') && (
                          <Button aria-label={`Restore ${c.name}`} busy={change.busy} onClick={() => void change.run(c, 'restore')}>
                            Restore
                          </Button>
                        ),
                },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={list.total} onPage={setPage} />
          </>
        )}
      </Loaded>
    </Page>
  );
}
