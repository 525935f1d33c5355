/**
 * The start page: who is signed in, what this key may do, and where to go next. On a new gateway
 * it walks the operator through a first request.
 */
import type { JSX } from 'preact';
import { api, type ListPage } from '../api';
import { link } from '../router';
import { CALL_ROUTES } from './logs-filters';
import { Loaded, Page, ScopeGroups, Section, useLoad, useSession } from '../ui';

interface Counts {
  logs?: number;
  workspaces?: number;
  virtualKeys?: number;
  configs?: number;
}

async function count(session: ReturnType<typeof useSession>, scope: string, path: string, signal: AbortSignal, query: Record<string, string> = {}): Promise<number | undefined> {
  if (!session.can(scope)) return undefined;
  try {
    return (await api.get<ListPage<unknown>>(path, { ...query, page_size: 1 }, signal)).total;
  } catch {
    return undefined;
  }
}

export function Home(): JSX.Element {
  const session = useSession();
  const p = session.principal;
  const counts = useLoad<Counts>(
    async (signal) => ({
      // Model and provider calls only: the console's own admin calls are logged too.
      logs: await count(session, 'logs.list', '/v1/logs', signal, { route: CALL_ROUTES }),
      workspaces: await count(session, 'workspaces.list', '/v1/admin/workspaces', signal),
      virtualKeys: await count(session, 'virtual_keys.list', '/v1/virtual-keys', signal),
      configs: await count(session, 'configs.list', '/v1/configs', signal),
    }),
    [],
  );
  const origin = location.origin;
  return (
    <Page title="Start" description={`Signed in as ${session.label} (${p.type} ${p.kind === 'jwt' ? 'JWT' : `${p.sub_type ?? ''} key`}, ${p.scopes.length} scopes).`}>
      <Loaded state={counts}>
        {(c) => (
          <div class="grid">
            {c.logs === 0 && (
              <Section title="Send a first request">
                <p>No request has gone through this gateway yet. Point any OpenAI-style client at it:</p>
                <pre class="json">{`curl ${origin}/v1/chat/completions \\
  -H "x-gateway-api-key: $GATEWAY_KEY" \\
  -H "x-gateway-provider: openai" \\
  -H "authorization: Bearer $OPENAI_API_KEY" \\
  -H "content-type: application/json" \\
  -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`}</pre>
                <p class="muted">Then watch it arrive in <a href={link('/logs')}>Logs</a>.</p>
              </Section>
            )}
            <Section title="Where to go">
              <ul class="next">
                {session.can('analytics.view') && (
                  <li>
                    <a href={link('/overview')}>Overview</a>: requests, errors, latency, tokens and cost over time.
                  </li>
                )}
                {session.canAny('logs.list', 'logs.view') && (
                  <li>
                    <a href={link('/logs')}>Logs</a>: every request{c.logs !== undefined ? ` (${c.logs.toLocaleString('en-US')} so far)` : ''}, followed live.
                  </li>
                )}
                {session.can('workspaces.list') && (
                  <li>
                    <a href={link('/workspaces')}>Workspaces</a>: give each team its own keys, limits and logs{c.workspaces !== undefined ? ` (${c.workspaces})` : ''}.
                  </li>
                )}
                {session.can('virtual_keys.list') && (
                  <li>
                    <a href={link('/virtual-keys')}>Virtual keys</a>: store provider keys in the gateway so apps never hold them{c.virtualKeys === 0 ? ' (none yet)' : ''}.
                  </li>
                )}
                {session.can('configs.list') && (
                  <li>
                    <a href={link('/configs')}>Configs</a>: fallbacks, load balancing, retries and caching{c.configs === 0 ? ' (none yet)' : ''}.
                  </li>
                )}
                {session.canAny('policies.list', 'policies.read') && (
                  <li>
                    <a href={link('/policies')}>Policies</a>: rate limits and budgets.
                  </li>
                )}
              </ul>
            </Section>
            <Section title="This key's scopes">
              <ScopeGroups scopes={p.scopes} />
            </Section>
          </div>
        )}
      </Loaded>
    </Page>
  );
}
