/**
 * Saved routing configs, versioned: create, list, get (by slug or id), update (every update is a
 * new version, even a rename), delete (archives), and the version history, newest first; and
 * `POST /v1/configs/validate`, which runs a save's checks on a config and stores nothing.
 *
 * `/v1/configs/validate` cannot be shadowed by a config whose slug is `validate`: exact routes are
 * matched before routes with parameters (core/routes.ts), and no `POST /v1/configs/:slug` exists;
 * such a config is still read, updated and deleted at `/v1/configs/validate` with GET, PUT, DELETE.
 *
 * For the router: {@link resolveConfig}`(store, slugOrId, workspaceId)` returns an active config
 * of that workspace with its provider secrets unsealed (frozen; undefined when there is none).
 *
 *   const config = resolveConfig(app.store, 'pc-prod-3f9a1c', principal.acting_workspace_id);
 *
 * Configs are checked with the routing schema (core/router/config-schema.ts) before anything is
 * written; provider secrets inside them (`api_key` at any depth, AWS and Vertex credentials) are
 * stored sealed as `{"sealed": "v1:…"}` and shown masked in every read, as are the header values
 * of the checks of inline guardrails (webhook credentials).
 *
 * With the `guardrails` plugin in the pipeline, the guardrail lists of a config are checked by it
 * too (`config.input_guardrails[0]["default.wordCount"].max`, a saved guardrail that does not
 * exist in the workspace); without it they are checked by the routing schema only.
 */
import { assertVisible, crudRoutes, defineAdminRoute, nestsDeeper, nowIso, slugify, uuidv7, versionedItem, versionedItemFields, versionedRoutes, S, type AnyAdminRoute, type Records, type Store } from '../../core/index.js';
import { checkConfigUpstreams, validateRoutingConfig, ValidationErrors, type CustomHostPolicy, type GatewayError, type GuardrailService } from '../../core/index.js';
import { hasGuardrailLists, hiddenGuardrailHeaders, maskConfig, sealConfig, unsealConfig } from './config-secrets.js';
import { deepFreeze } from './provider-fields.js';

type ConfigRecord = Records.ConfigRecord;
type ConfigVersion = Records.ConfigVersion;

const resource = 'config';

const itemFields = { ...versionedItemFields, is_default: S.int };
const configItem = S.record(itemFields);
const configDetail = S.record({ ...itemFields, config: S.anyObject });
const versionItem = S.record({
  id: S.str,
  version_id: S.str,
  slug: S.str,
  name: S.str,
  config: S.anyObject,
  format: S.str,
  created_by: S.strOrNull,
  created_at: S.str,
  object: S.str,
});

type ItemView = Omit<ConfigRecord, 'config'> & { object: 'config' };

/** List items leave the config body out: lists stay small, and no secret needs masking there. */
function item(c: ConfigRecord): ItemView {
  return { ...versionedItem(c, 'config'), is_default: c.is_default };
}

function detail(store: Store, c: ConfigRecord): ItemView & { config: Record<string, unknown> } {
  return { ...item(c), config: maskConfig(store, c.config) };
}

function versionView(store: Store, v: ConfigVersion): Record<string, unknown> {
  return {
    id: v.config_id,
    version_id: v.id,
    slug: v.slug,
    name: v.name,
    config: maskConfig(store, v.config),
    format: 'json',
    created_by: v.created_by,
    created_at: v.created_at,
    object: 'config',
  };
}

/** Configs are addressed by slug; the id works too. */
function findConfig(store: Store, slugOrId: string): ConfigRecord | undefined {
  return store.c.configs.getBy('slug', slugOrId) ?? store.c.configs.get(slugOrId);
}

/** What a saved config is checked against besides the routing schema. */
export interface ConfigRules {
  /** The YAML's `security.custom_hosts`: custom hosts are checked when saved, as the router does. */
  policy: CustomHostPolicy;
  /** The `guardrails` service, when that plugin is in the pipeline. */
  guardrails: () => GuardrailService | undefined;
}

/**
 * A 400 naming the path inside the config (`config.targets[1].weight`), before anything is written:
 * the first of {@link configProblems}.
 */
function assertValidConfig(config: Record<string, unknown>, rules: ConfigRules, workspaceId: string): void {
  const first = configProblems(config, rules, workspaceId).next();
  if (first.done !== true) throw first.value;
}

/**
 * The problems of a config, in the order they are checked: the routing schema and rules, then
 * the nesting bound, then the upstream guard (custom hosts, provider field grammar), as inline
 * configs get per request, then the guardrail lists (saved ones must exist in the config's
 * workspace). Each check names its first problem.
 *
 * Lazy, so a save stops at the first problem and `POST /v1/configs/validate` lists them all from
 * the same checks. The guard and the guardrail lists walk the tree as the schema shaped it: they
 * run only on a config that passed the schema, the rules and the depth bound, and then both run
 * (a refused custom host and an unknown guardrail are both listed).
 */
function* configProblems(config: Record<string, unknown>, rules: ConfigRules, workspaceId: string): Generator<GatewayError> {
  const shape = validateRoutingConfig(config) ?? depthError(config);
  if (shape !== null) {
    yield shape;
    return;
  }
  const upstream = checkConfigUpstreams(config, rules.policy);
  if (upstream !== null) yield upstream;
  const guardrails = guardrailError(config, rules, workspaceId);
  if (guardrails !== null) yield guardrails;
}

/**
 * Deepest JSON nesting of a saved config. The schema bounds `targets` and queries, but leaves
 * are open (provider fields, check parameters): without this, a value nested thousands deep
 * passes and then breaks the recursive copies that seal and store it (a 500).
 */
const MAX_JSON_DEPTH = 128;

function depthError(config: Record<string, unknown>): GatewayError | null {
  return nestsDeeper(config, MAX_JSON_DEPTH) ? ValidationErrors.invalidValue(`config nests deeper than ${MAX_JSON_DEPTH} levels.`, { param: 'config' }) : null;
}

function guardrailError(config: Record<string, unknown>, rules: ConfigRules, workspaceId: string): GatewayError | null {
  // Looked up only when needed: a pipeline without the plugin logs its absence once, on first use.
  const service = hasGuardrailLists(config) ? rules.guardrails() : undefined;
  return service === undefined ? null : service.validateConfig(config, 'config', workspaceId);
}

/**
 * The body's config in clear, for the handler. The body is left holding a copy with guardrail
 * header values masked: the audit record is built from it once the handler has run.
 */
function takeConfig(body: { config?: Record<string, unknown> }): Record<string, unknown> | undefined {
  const config = body.config;
  if (config !== undefined) body.config = hiddenGuardrailHeaders(config);
  return config;
}

const configBody: S.JsonSchema = { type: 'object', maxProperties: 256, description: 'A routing config (see the routing config schema).' };

interface CreateBody {
  name: string;
  config: Record<string, unknown>;
  workspace_id?: string;
  is_default?: 0 | 1;
  slug?: string;
}

interface ValidateBody {
  config: Record<string, unknown>;
  workspace_id?: string;
}

/** One problem of a config, as `POST /v1/configs/validate` lists it. */
interface ConfigProblem {
  /** Where, as the 400 of a save names it: `config.targets[1].weight`. */
  path: string;
  message: string;
  code: string;
}

const problemView = (err: GatewayError): ConfigProblem => ({ path: err.param ?? 'config', message: err.message, code: err.code });

interface UpdateBody {
  name?: string;
  config?: Record<string, unknown>;
  status?: ConfigRecord['status'];
}

/** The routes, checking configs against `rules`. */
export function configRoutes(rules: ConfigRules): AnyAdminRoute[] {
  const crud = crudRoutes({ path: '/v1/configs', key: 'slug', resource, scopes: 'configs', level: 'workspace' });
  const versioned = versionedRoutes(crud, {
    noun: 'Config',
    records: (store) => store.c.configs,
    find: findConfig,
    create: crud.create<CreateBody>({
      summary: 'Create a routing config',
      body: {
        type: 'object',
        properties: {
          name: S.name255,
          config: configBody,
          workspace_id: S.workspaceRef,
          is_default: { type: 'integer', enum: [0, 1] },
          slug: S.slug,
        },
        required: ['name', 'config'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str, version_id: S.str, object: S.str }),
      handler({ body, workspace, principal, store }) {
        const clear = takeConfig(body)!;
        assertValidConfig(clear, rules, workspace!.id);
        const now = nowIso();
        const sealed = sealConfig(store, clear);
        const config: ConfigRecord = {
          id: uuidv7(),
          slug: body.slug ?? `pc-${slugify(body.name)}`,
          name: body.name,
          organisation_id: principal.organisation_id,
          workspace_id: workspace!.id,
          config: sealed,
          version_id: uuidv7(),
          is_default: body.is_default ?? 0,
          status: 'active',
          owner_id: principal.user_id,
          updated_by: principal.user_id,
          created_at: now,
          last_updated_at: now,
        };
        // One transaction: the config, its first version and the default flag land together or not at all.
        store.root.transactionSync(() => {
          if (config.is_default === 1) clearDefault(store, config.workspace_id, now);
          store.c.configs.insert(config);
          store.c.configVersions.insert(versionOf(config, principal.user_id, now));
        });
        return { id: config.id, slug: config.slug, version_id: config.version_id, object: 'config' };
      },
    }),
    update: crud.update<UpdateBody>({
      summary: 'Update a routing config (creates a new version)',
      body: {
        type: 'object',
        properties: { name: S.name255, config: configBody, status: { type: 'string', enum: ['active', 'archived'] } },
        minProperties: 1,
        additionalProperties: false,
      },
      response: S.record({ version_id: S.str }),
      handler({ params, body, principal, store }) {
        const clear = takeConfig(body);
        const current = assertVisible(principal, findConfig(store, params.slug!), 'Config');
        if (clear !== undefined) assertValidConfig(clear, rules, current.workspace_id);
        const sealed = clear === undefined ? undefined : sealConfig(store, clear, current.config);
        const now = nowIso();
        const versionId = uuidv7();
        // Every update is a version, even a rename: the history answers "what did this config look
        // like then", and the name is part of that.
        const updated = store.root.transactionSync(() => {
          const next = store.c.configs.update(current.id, (c) => ({
            ...c,
            name: body.name ?? c.name,
            config: sealed ?? c.config,
            status: body.status ?? c.status,
            is_default: body.status === 'archived' ? 0 : c.is_default,
            version_id: versionId,
            updated_by: principal.user_id,
            last_updated_at: now,
          }));
          store.c.configVersions.insert(versionOf(next, principal.user_id, now));
          return next;
        });
        return { version_id: updated.version_id };
      },
    }),
    list: { summary: 'List routing configs (active ones unless `status` says otherwise)', item: configItem, view: item },
    read: { summary: 'Get a routing config (provider keys masked)', response: configDetail, view: detail },
    // An archived config is no longer the default: the router stops resolving it.
    delete: { summary: 'Delete (archive) a routing config', archived: { is_default: 0 } },
    versions: {
      summary: 'List the versions of a routing config, newest first',
      records: (store) => store.c.configVersions,
      index: 'config',
      item: versionItem,
      view: (store, _config, v) => versionView(store, v),
    },
  });
  // `/v1/configs/validate` is an exact path: no config slug shadows it (see the header).
  return [
    ...versioned,
    defineAdminRoute<ValidateBody>({
      method: 'POST',
      path: '/v1/configs/validate',
      summary:
        'Check a routing config without saving it, with the checks of a save: `{valid: true}`, or `{valid: false, errors: [{path, message, code}]}` (`path` as a save\'s 400 names it, e.g. `config.targets[1].weight`)',
      resource,
      action: 'validate',
      // The scope of the save it rehearses; nothing is written, so nothing is audited (`readOnly`).
      scope: 'configs.create',
      level: 'workspace',
      readOnly: true,
      body: {
        type: 'object',
        // `workspace_id`: where saved guardrails named by the config are looked up, as for a create.
        properties: { config: configBody, workspace_id: S.workspaceRef },
        required: ['config'],
        additionalProperties: false,
      },
      response: S.record(
        {
          valid: S.bool,
          errors: {
            type: 'array',
            description: 'Only when `valid` is false: every problem found, in the order a save checks them (its 400 is the first).',
            items: S.record({ path: S.str, message: S.str, code: S.str }),
          },
        },
        ['valid'],
      ),
      handler({ body, workspace }) {
        const errors = [...configProblems(body.config, rules, workspace!.id)].map(problemView);
        return errors.length === 0 ? { valid: true } : { valid: false, errors };
      },
    }),
  ];
}

function versionOf(c: ConfigRecord, userId: string | null, now: string): ConfigVersion {
  return { id: c.version_id, config_id: c.id, slug: c.slug, name: c.name, config: c.config, created_at: now, created_by: userId };
}

/** At most one default config per workspace: a new default takes the flag from the old one. */
function clearDefault(store: Store, workspaceId: string, now: string): void {
  const { items } = store.c.configs.list({ index: 'workspace', value: workspaceId, filter: (c) => c.is_default === 1 });
  for (const old of items) store.c.configs.update(old.id, (c) => ({ ...c, is_default: 0, last_updated_at: now }));
}

/** Unsealed configs by stored record: `cachedBy` hands back the same record until a config changes. */
const unsealed = new WeakMap<ConfigRecord, Record<string, unknown>>();

/**
 * The active config `slugOrId` of workspace `workspaceId`, provider secrets in clear, for the
 * router; undefined when it does not exist, is archived or belongs to another workspace. The
 * result is frozen and shared between requests: copy before changing it.
 *
 * @example
 *   const config = resolveConfig(store, 'pc-prod-3f9a1c', principal.acting_workspace_id);
 *   if (config === undefined) throw RoutingErrors.unknownConfig();
 */
export function resolveConfig(store: Store, slugOrId: string, workspaceId: string): Record<string, unknown> | undefined {
  const record = store.c.configs.cachedBy('slug', slugOrId) ?? store.c.configs.get(slugOrId);
  if (record === undefined || record.workspace_id !== workspaceId || record.status !== 'active') return undefined;
  let config = unsealed.get(record);
  if (config === undefined) {
    config = deepFreeze(unsealConfig(store, record.config));
    unsealed.set(record, config);
  }
  return config;
}

