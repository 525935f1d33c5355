/**
 * Every view of the console: where it lives, what it needs, where it sits in the navigation.
 * A view shows only when the key holds one of its `scopes` and the gateway serves its `api` (a
 * pipeline without the plugin behind a page has no such route in its OpenAPI document).
 */
import type { JSX } from 'preact';
import type { Route } from './router';
import { Home } from './pages/home';
import { Overview } from './pages/overview';
import { Logs } from './pages/logs';
import { ApiKeys } from './pages/api-keys';
import { Workspaces } from './pages/workspaces';
import { Users } from './pages/users';
import { VirtualKeys } from './pages/virtual-keys';
import { Integrations } from './pages/integrations';
import { Providers } from './pages/providers';
import { Configs } from './pages/configs';
import { Policies } from './pages/policies';
import { Guardrails } from './pages/guardrails';
import { Audit } from './pages/audit';
import { Pricing } from './pages/pricing';

export interface View {
  path: string;
  title: string;
  group: 'Watch' | 'Access' | 'Route' | 'Govern' | 'Organisation';
  /** Any one of these scopes shows the view (empty: every signed-in key). */
  scopes: string[];
  /** An admin API path the view needs; absent from the OpenAPI document, the view hides. */
  api?: string;
  component: (props: { route: Route }) => JSX.Element;
}

export const VIEWS: View[] = [
  { path: '/', title: 'Start', group: 'Watch', scopes: [], component: Home },
  { path: '/overview', title: 'Overview', group: 'Watch', scopes: ['analytics.view'], api: '/v1/analytics/graphs/requests', component: Overview },
  { path: '/logs', title: 'Logs', group: 'Watch', scopes: ['logs.list', 'logs.view'], api: '/v1/logs', component: Logs },
  { path: '/api-keys', title: 'API keys', group: 'Access', scopes: ['organisation_service_api_keys.list', 'workspace_service_api_keys.list', 'workspace_user_api_keys.list'], api: '/v1/api-keys', component: ApiKeys },
  { path: '/workspaces', title: 'Workspaces', group: 'Access', scopes: ['workspaces.list', 'workspaces.read'], api: '/v1/admin/workspaces', component: Workspaces },
  { path: '/users', title: 'Users & invites', group: 'Access', scopes: ['organisation_users.list'], api: '/v1/admin/users', component: Users },
  { path: '/virtual-keys', title: 'Virtual keys', group: 'Route', scopes: ['virtual_keys.list'], api: '/v1/virtual-keys', component: VirtualKeys },
  { path: '/integrations', title: 'Integrations', group: 'Route', scopes: ['organisation_integrations.list', 'workspace_integrations.list'], api: '/v1/integrations', component: Integrations },
  { path: '/providers', title: 'Providers', group: 'Route', scopes: ['providers.list'], api: '/v1/providers', component: Providers },
  { path: '/configs', title: 'Configs', group: 'Route', scopes: ['configs.list', 'configs.read'], api: '/v1/configs', component: Configs },
  { path: '/policies', title: 'Policies', group: 'Govern', scopes: ['policies.list', 'policies.read'], api: '/v1/policies/rate-limits', component: Policies },
  { path: '/guardrails', title: 'Guardrails', group: 'Govern', scopes: ['guardrails.list', 'guardrails.read'], api: '/v1/guardrails', component: Guardrails },
  { path: '/audit', title: 'Audit log', group: 'Organisation', scopes: ['audit_logs.list'], api: '/v1/audit-logs', component: Audit },
  { path: '/pricing', title: 'Pricing & models', group: 'Organisation', scopes: [], api: '/v1/model-pricing', component: Pricing },
];

export const GROUPS: View['group'][] = ['Watch', 'Access', 'Route', 'Govern', 'Organisation'];
