/**
 * Policies: rate limits (requests or tokens per minute, hour, day) and usage limits (budgets in
 * USD or tokens, with each counted value's usage as a bar and a reset), one tab each
 * (`#/policies?tab=usage`), filtered by workspace for organisation keys.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { navigate, type Route } from '../router';
import { Page, SelectField, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { Tabs } from './policies-form';
import { RateLimits } from './policies-rate';
import { UsageLimits } from './policies-usage';
import './configs.css';

type Tab = 'rate' | 'usage';

export function Policies({ route }: { route: Route }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [workspace, setWorkspace] = useState('');
  const tab: Tab = route.query.get('tab') === 'usage' ? 'usage' : 'rate';
  return (
    <Page title="Policies" description="Limits that apply to every request they match, whatever key or config it uses: rate limits slow traffic down, usage limits cap what it spends.">
      {session.isOrganisation && workspaces.list.length > 0 && (
        <div class="filters">
          <SelectField
            label="Workspace"
            value={workspace}
            onChange={setWorkspace}
            options={[['', 'All workspaces'], ...workspaces.list.map((w): [string, string] => [w.id, w.slug])]}
          />
        </div>
      )}
      <Tabs
        label="Kind of policy"
        tabs={[
          ['rate', 'Rate limits'],
          ['usage', 'Usage limits'],
        ]}
        current={tab}
        panelId="policy-panel"
        onChange={(t) => navigate('/policies', t === 'usage' ? { tab: 'usage' } : {}, true)}
      />
      <div id="policy-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'rate' ? <RateLimits workspace={workspace} workspaces={workspaces.list} /> : <UsageLimits workspace={workspace} workspaces={workspaces.list} />}
      </div>
    </Page>
  );
}
