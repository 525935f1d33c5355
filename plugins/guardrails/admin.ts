/**
 * Saved guardrails (`/v1/guardrails`), versioned: create, list, get (by slug or id), update
 * (every update is a new version, even a rename), delete (archives), and the version history,
 * newest first.
 *
 * A saved guardrail is a named list of inline guardrail objects (1 to 32), referred to by id or
 * slug from routing configs, API keys and workspaces. It holds inline objects only: a string
 * inside (a reference to another saved guardrail) is a 400, which also rules out cycles. Every
 * check id, action key and parameter is checked by the check registry before anything is written
 * (a 400 naming `checks[0]["default.wordCount"].max`).
 *
 * Header values of the checks (webhook credentials) are stored sealed and shown masked in every
 * read and in the audit trail (secrets.ts); the engine gets them through `unsealGuardrailChecks`.
 */
import {
  assertVisible,
  crudRoutes,
  nestsDeeper,
  nowIso,
  slugify,
  uuidv7,
  versionedItem,
  versionedItemFields,
  versionedRoutes,
  S,
  ValidationErrors,
  type AnyAdminRoute,
  type GuardrailService,
  type Records,
  type Store,
} from '../../core/index.js';
import { hiddenGuardrailHeaders, maskGuardrailChecks, sealGuardrailChecks } from './secrets.js';
import { MAX_GUARDRAILS } from './registry.js';

type GuardrailRecord = Records.GuardrailRecord;
type GuardrailVersion = Records.GuardrailVersion;
type Checks = GuardrailRecord['checks'];

/** The audit trail's resource type. */
const resource = 'guardrails';

const itemFields = versionedItemFields;
const checksOut: S.JsonSchema = { type: 'array', items: S.anyObject };
const guardrailItem = S.record(itemFields);
const guardrailDetail = S.record({ ...itemFields, checks: checksOut });
const versionItem = S.record({
  id: S.str,
  version_id: S.str,
  slug: S.str,
  name: S.str,
  checks: checksOut,
  created_by: S.strOrNull,
  created_at: S.str,
  object: S.str,
});

/** The `checks` of a body: inline guardrail objects only (saved guardrails do not nest). */
const checksBody: S.JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_GUARDRAILS,
  description:
    'Inline guardrail objects: one or more check ids with their parameters, plus action keys, e.g. ' +
    '{"default.regexMatch": {"rule": "\\\\d{16}"}, "deny": true}. Not the id of another saved guardrail.',
  items: { type: 'object', maxProperties: 32 },
};

type ItemView = Omit<GuardrailRecord, 'checks'> & { object: 'guardrail' };

/** List items leave the checks out: lists stay small, and no header value needs masking there. */
function item(g: GuardrailRecord): ItemView {
  return versionedItem(g, 'guardrail');
}

function detail(store: Store, g: GuardrailRecord): ItemView & { checks: Checks } {
  return { ...item(g), checks: maskGuardrailChecks(store, g.checks) };
}

function versionView(store: Store, v: GuardrailVersion): Record<string, unknown> {
  return {
    id: v.guardrail_id,
    version_id: v.id,
    slug: v.slug,
    name: v.name,
    checks: maskGuardrailChecks(store, v.checks),
    created_by: v.created_by,
    created_at: v.created_at,
    object: 'guardrail',
  };
}

/** Guardrails are addressed by slug; the id works too. */
function findGuardrail(store: Store, slugOrId: string): GuardrailRecord | undefined {
  return store.c.guardrails.getBy('slug', slugOrId) ?? store.c.guardrails.get(slugOrId);
}

/**
 * Deepest nesting of one guardrail object (a check's parameters included). Far beyond any real
 * check; keeps a hostile body from reaching the recursive copies and encoders behind the store.
 */
const MAX_GUARDRAIL_DEPTH = 32;

/**
 * The body's checks in clear, for the handler, bounded in depth (a 400 naming `checks[i]`). The
 * body is left holding a copy with every header value masked: the audit record is built from it
 * once the handler has run.
 */
function takeChecks(body: { checks?: Checks }): Checks | undefined {
  const checks = body.checks;
  if (checks === undefined) return undefined;
  body.checks = hiddenGuardrailHeaders(checks);
  checks.forEach((guardrail, i) => {
    if (nestsDeeper(guardrail, MAX_GUARDRAIL_DEPTH)) {
      throw ValidationErrors.invalidValue(`checks[${i}] nests deeper than ${MAX_GUARDRAIL_DEPTH} levels.`, { param: `checks[${i}]` });
    }
  });
  return checks;
}

/** A 400 naming the field (`checks[0]["default.wordCount"].max`) unless every guardrail is valid. */
function assertValidChecks(service: GuardrailService, checks: Checks, workspaceId: string): void {
  const err = service.validate(checks, 'checks', workspaceId);
  if (err !== null) throw err;
}

interface CreateBody {
  name: string;
  checks: Checks;
  workspace_id?: string;
  slug?: string;
}

interface UpdateBody {
  name?: string;
  checks?: Checks;
  status?: GuardrailRecord['status'];
}

/** The routes; `service` validates the checks against the registered checks. */
export function guardrailRoutes(service: GuardrailService): AnyAdminRoute[] {
  const crud = crudRoutes({ path: '/v1/guardrails', key: 'slug', resource, scopes: 'guardrails', level: 'workspace' });
  return versionedRoutes(crud, {
    noun: 'Guardrail',
    records: (store) => store.c.guardrails,
    find: findGuardrail,
    create: crud.create<CreateBody>({
      summary: 'Create a saved guardrail',
      body: {
        type: 'object',
        properties: { name: S.name255, checks: checksBody, workspace_id: S.workspaceRef, slug: S.slug },
        required: ['name', 'checks'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str, version_id: S.str, object: S.str }),
      handler({ body, workspace, principal, store }) {
        const checks = takeChecks(body)!;
        assertValidChecks(service, checks, workspace!.id);
        const now = nowIso();
        const guardrail: GuardrailRecord = {
          id: uuidv7(),
          slug: body.slug ?? `gr-${slugify(body.name)}`,
          name: body.name,
          organisation_id: principal.organisation_id,
          workspace_id: workspace!.id,
          checks: sealGuardrailChecks(store, checks),
          version_id: uuidv7(),
          status: 'active',
          owner_id: principal.user_id,
          updated_by: principal.user_id,
          created_at: now,
          last_updated_at: now,
        };
        // One transaction: the guardrail and its first version land together or not at all. A
        // taken slug is a unique-index clash: 409 conflict naming `slug`.
        store.root.transactionSync(() => {
          store.c.guardrails.insert(guardrail);
          store.c.guardrailVersions.insert(versionOf(guardrail, principal.user_id, now));
        });
        return { id: guardrail.id, slug: guardrail.slug, version_id: guardrail.version_id, object: 'guardrail' };
      },
    }),
    update: crud.update<UpdateBody>({
      summary: 'Update a saved guardrail (creates a new version)',
      body: {
        type: 'object',
        properties: { name: S.name255, checks: checksBody, status: { type: 'string', enum: ['active', 'archived'] } },
        minProperties: 1,
        additionalProperties: false,
      },
      response: S.record({ version_id: S.str }),
      handler({ params, body, principal, store }) {
        const checks = takeChecks(body);
        const current = assertVisible(principal, findGuardrail(store, params.slug!), 'Guardrail');
        if (checks !== undefined) assertValidChecks(service, checks, current.workspace_id);
        // A masked header value sent back keeps the stored one (see secrets.ts).
        const sealed = checks === undefined ? undefined : sealGuardrailChecks(store, checks, current.checks);
        const now = nowIso();
        const versionId = uuidv7();
        // Every update is a version, even a rename: the history answers "what did this guardrail
        // look like then", and the name is part of that.
        const updated = store.root.transactionSync(() => {
          const next = store.c.guardrails.update(current.id, (g) => ({
            ...g,
            name: body.name ?? g.name,
            checks: sealed ?? g.checks,
            status: body.status ?? g.status,
            version_id: versionId,
            updated_by: principal.user_id,
            last_updated_at: now,
          }));
          store.c.guardrailVersions.insert(versionOf(next, principal.user_id, now));
          return next;
        });
        return { version_id: updated.version_id };
      },
    }),
    list: { summary: 'List saved guardrails (active ones unless `status` says otherwise)', item: guardrailItem, view: item },
    read: { summary: 'Get a saved guardrail with its checks (header values masked)', response: guardrailDetail, view: detail },
    // Configs, keys and workspaces that still name an archived guardrail no longer resolve it (a
    // 400 `unknown_guardrail` when they are next saved).
    delete: { summary: 'Delete (archive) a saved guardrail' },
    versions: {
      summary: 'List the versions of a saved guardrail, newest first',
      records: (store) => store.c.guardrailVersions,
      index: 'guardrail',
      item: versionItem,
      view: (store, _guardrail, v) => versionView(store, v),
    },
  });
}

function versionOf(g: GuardrailRecord, userId: string | null, now: string): GuardrailVersion {
  return { id: g.version_id, guardrail_id: g.id, slug: g.slug, name: g.name, checks: g.checks, created_at: now, created_by: userId };
}
