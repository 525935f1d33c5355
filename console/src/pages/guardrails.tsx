/**
 * Guardrails: the saved guardrails (`#/guardrails`), a new one (`#/guardrails/new`) and one
 * guardrail's editor with its version history and diffs (`#/guardrails/<slug>`, see
 * guardrails-edit.tsx). Delete archives (configs and keys naming it stop resolving it); restore
 * re-activates.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { link, type Route } from '../router';
import { Badge, Button, Empty, ErrorNote, Loaded, Page, Pager, SelectField, Table, fmtTime, useAction, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { GUARDRAIL_HELP, GuardrailCreate, GuardrailEdit, type GuardrailItem } from './guardrails-edit';
import './configs.css';

const PAGE_SIZE = 25;

export function Guardrails({ route }: { route: Route }): JSX.Element {
  const sub = route.parts[1];
  if (sub === undefined) return <GuardrailList />;
  if (sub === 'new') return <GuardrailCreate />;
  return <GuardrailEdit slug={sub} key={sub} />;
}

function GuardrailList(): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [workspace, setWorkspace] = useState('');
  const [status, setStatus] = useState<'active' | 'archived'>('active');
  const [page, setPage] = useState(0);
  const list = useLoad(
    (signal) => api.get<ListPage<GuardrailItem>>('/v1/guardrails', { workspace_id: workspace || undefined, status, current_page: page, page_size: PAGE_SIZE }, signal),
    [workspace, status, page],
  );
  const change = useAction(async (g: GuardrailItem, to: 'archive' | 'restore') => {
    if (to === 'archive') {
      if (!confirm(`Delete the guardrail “${g.name}”? Configs and keys naming ${g.slug} no longer run it; its versions are kept.`)) return;
      await api.del(`/v1/guardrails/${encodeURIComponent(g.slug)}`);
    } else {
      await api.put(`/v1/guardrails/${encodeURIComponent(g.slug)}`, { status: 'active' });
    }
    list.reload();
  });
  const wsName = (id: string): string => workspaces.list.find((w) => w.id === id)?.slug ?? id;
  const canCreate = session.can('guardrails.create');
  return (
    <Page
      title="Guardrails"
      description={GUARDRAIL_HELP}
      actions={
        canCreate && (
          <a class="btn btn-primary" href={link('/guardrails/new')}>
            New guardrail
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
              caption="Guardrails"
              rows={found.data}
              rowKey={(g) => g.id}
              empty={
                <Empty title={status === 'active' ? 'No guardrails yet.' : 'No deleted guardrails.'}>
                  {status === 'active' && (canCreate ? 'Create one with “New guardrail”, then name it in a config’s input_guardrails or output_guardrails.' : 'This key may not create guardrails.')}
                </Empty>
              }
              columns={[
                { label: 'Name', render: (g) => (session.can('guardrails.read') ? <a href={link(`/guardrails/${encodeURIComponent(g.slug)}`)}>{g.name}</a> : g.name) },
                { label: 'Slug', render: (g) => <code>{g.slug}</code> },
                { label: 'Workspace', render: (g) => wsName(g.workspace_id) },
                { label: 'Status', render: (g) => <Badge tone={g.status === 'active' ? 'ok' : 'bad'}>{g.status}</Badge> },
                { label: 'Updated', render: (g) => fmtTime(g.last_updated_at) },
                {
                  label: 'Actions',
                  render: (g) =>
                    g.status === 'active'
                      ? session.can('guardrails.delete') && (
                          <Button kind="danger" aria-label={`Delete ${g.name}`} busy={change.busy} onClick={() => void change.run(g, 'archive')}>
                            Delete
                          </Button>
                        )
                      : session.can('guardrails.update') && (
                          <Button aria-label={`Restore ${g.name}`} busy={change.busy} onClick={() => void change.run(g, 'restore')}>
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
