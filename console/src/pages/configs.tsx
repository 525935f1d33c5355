/**
 * Configs: the saved routing configs (`#/configs`), a new one (`#/configs/new`: a starter
 * fallback between two targets) and one config's editor with its version history and diffs
 * (`#/configs/<slug>`), as every versioned resource (versioned.tsx). The JSON is checked as you
 * type locally, then by `POST /v1/configs/validate`; a config may be its workspace's default.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { request } from '../api';
import type { Route } from '../router';
import { Badge, Checkbox } from '../ui';
import { jsonBody, VersionedPage, type Remote, type VersionedItem, type VersionedKind } from './versioned';
import type { Problem } from './versioned-json';

export interface ConfigItem extends VersionedItem {
  is_default: number;
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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function configShape(value: unknown): Problem[] {
  return isObject(value) ? [] : [{ path: 'config', message: 'A config is a JSON object: { "strategy": …, "targets": [ … ] }.', code: 'invalid_type' }];
}

/** The API's check of a config (the checks of a save; nothing is written). */
function validateRemote(workspaceId: string | undefined): Remote {
  return async (value, signal) => {
    const body: Record<string, unknown> = { config: value };
    if (workspaceId !== undefined && workspaceId !== '') body.workspace_id = workspaceId;
    const r = await request<{ valid: boolean; errors?: Problem[] }>('POST', '/v1/configs/validate', body, { signal });
    return r.valid ? [] : r.errors ?? [{ path: 'config', message: 'The gateway refused this config.', code: 'invalid_config' }];
  };
}

/** A new config may be its workspace's default. */
function useDefaultFlag(): { fields: JSX.Element; body: Record<string, unknown> } {
  const [isDefault, setDefault] = useState(false);
  return {
    fields: <Checkbox label="Default config of the workspace (used when a request names none)" checked={isDefault} onChange={setDefault} />,
    body: isDefault ? { is_default: 1 } : {},
  };
}

const CONFIGS: VersionedKind<ConfigItem> = {
  api: '/v1/configs',
  route: '/configs',
  scope: 'configs',
  one: 'config',
  many: 'configs',
  help: CONFIG_HELP,
  bodyKey: 'config',
  starter: STARTER_CONFIG,
  useBody: jsonBody(configShape),
  validate: validateRemote,
  plainText: true,
  editor: {
    id: 'config-json',
    label: 'Config JSON',
    hint: 'The routing config as JSON. Provider keys are shown masked: leave a mask as it is to keep the stored key. Checked as you type; Save is enabled once it is valid.',
    historyLabel: 'Config',
  },
  create: {
    namePlaceholder: 'Production chat',
    slugPlaceholder: 'prod-chat',
    slugHint: 'What apps send in x-gateway-config. Left empty: made from the name.',
    useExtra: useDefaultFlag,
  },
  list: {
    column: { label: 'Default', render: (c) => (c.is_default === 1 ? <Badge tone="ok">default</Badge> : <span class="muted">no</span>) },
    emptyHint: 'Create one with “New config”: it starts from a fallback between two targets.',
    deleteWarning: (c) => `Delete the config “${c.name}”? Requests naming ${c.slug} fail from now on; its versions are kept.`,
  },
  facts: {
    slugNote: (c) => (
      <>
        <span class="muted">— send </span>
        <code>x-gateway-config: {c.slug}</code>
      </>
    ),
    badges: (c) => c.is_default === 1 && <Badge tone="ok">default</Badge>,
  },
};

export function Configs({ route }: { route: Route }): JSX.Element {
  return <VersionedPage kind={CONFIGS} route={route} />;
}
