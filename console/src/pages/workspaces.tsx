/**
 * Workspaces: list (active or archived), create (name, slug, description), and a workspace's
 * detail at `#/workspaces/<id>`: its facts, edit, archive, and its members (add with a role,
 * change a role, remove).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import type { Route } from '../router';
import { navigate } from '../router';
import { Badge, Button, Dialog, Empty, ErrorNote, Loaded, Page, Pager, SelectField, Table, TextField, fmtTime, useAction, useLoad, useSession } from '../ui';
import { WorkspaceDetail } from './workspaces-detail';

export interface WorkspaceRecord {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  status: string;
  created_at: string;
  last_updated_at: string;
  defaults: { is_default: number; metadata: Record<string, string> };
}

const PAGE_SIZE = 25;

export function Workspaces({ route }: { route: Route }): JSX.Element {
  const session = useSession();
  const [status, setStatus] = useState('active');
  const [page, setPage] = useState(0);
  const [creating, setCreating] = useState(false);
  const list = useLoad((signal) => api.get<ListPage<WorkspaceRecord>>('/v1/admin/workspaces', { status, current_page: page, page_size: PAGE_SIZE }, signal), [status, page]);
  const openId = route.parts[1];
  const canCreate = session.can('workspaces.create');

  return (
    <Page
      title="Workspaces"
      description="Workspaces separate teams and apps: each has its own keys, configs, virtual keys, limits and members."
      actions={canCreate && <Button kind="primary" onClick={() => setCreating(true)}>Create workspace</Button>}
    >
      {session.isOrganisation && (
        <div class="filters">
          <SelectField label="Status" value={status} onChange={(v) => { setStatus(v); setPage(0); }} options={[['active', 'Active'], ['archived', 'Archived'], ['active,archived', 'All']]} />
        </div>
      )}
      <Loaded state={list}>
        {(data) => (
          <>
            <Table
              caption="Workspaces"
              rows={data.data}
              rowKey={(w) => w.id}
              empty={<Empty title="No workspaces here.">{canCreate ? 'Create one with “Create workspace”, then add members and keys to it.' : 'This key sees no workspace with this status.'}</Empty>}
              columns={[
                { label: 'Name', render: (w) => (session.can('workspaces.read') ? <a href={`#/workspaces/${encodeURIComponent(w.id)}`}>{w.name}</a> : w.name) },
                { label: 'Slug', render: (w) => <code>{w.slug}</code> },
                { label: 'Description', render: (w) => w.description ?? <span class="muted">—</span> },
                { label: 'Status', render: (w) => (
                  <>
                    <Badge tone={w.status === 'active' ? 'ok' : 'plain'}>{w.status}</Badge> {w.defaults.is_default === 1 && <Badge>default</Badge>}
                  </>
                ) },
                { label: 'Created', render: (w) => fmtTime(w.created_at) },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </Loaded>
      {creating && (
        <CreateWorkspace
          onClose={() => setCreating(false)}
          onCreated={(id) => {
            setCreating(false);
            list.reload();
            navigate(`/workspaces/${id}`);
          }}
        />
      )}
      {openId !== undefined && (
        <WorkspaceDetail
          id={openId}
          onClose={() => navigate('/workspaces')}
          onChanged={() => list.reload()}
        />
      )}
    </Page>
  );
}

function CreateWorkspace(props: { onClose: () => void; onCreated: (id: string) => void }): JSX.Element {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction(async () => {
    const body: Record<string, unknown> = { name: name.trim() };
    if (slug.trim() !== '') body.slug = slug.trim();
    if (description.trim() !== '') body.description = description.trim();
    const made = await api.post<{ id: string }>('/v1/admin/workspaces', body);
    props.onCreated(made.id);
  });
  return (
    <Dialog title="Create a workspace" open onClose={props.onClose}>
      <form onSubmit={(e) => { e.preventDefault(); void action.run(); }}>
        <TextField label="Name" value={name} onInput={setName} required placeholder="Billing team" />
        <TextField label="Slug" value={slug} onInput={setSlug} placeholder="billing-team" hint="Optional: letters, digits, - and _. Made from the name when blank." />
        <TextField label="Description" value={description} onInput={setDescription} />
        <ErrorNote error={action.error} />
        <div class="row end">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={action.busy} disabled={name.trim() === ''}>
            Create
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
