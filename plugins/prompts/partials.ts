/**
 * Prompt partials (`/v1/prompts/partials`): reusable template fragments, included from prompts
 * (and from other partials) by slug, `{{> slug}}`, within one workspace. Versioned like prompts:
 * every save is an immutable version with a description; there is no separate publish. A render
 * uses the latest version of each partial, so a partial fix applies to every prompt at once (the
 * prompt's own version pins its template, not its partials). Archiving a partial makes renders
 * that include it a 400 `unknown_partial`, and saving a prompt that includes it a 400 too.
 *
 * The scopes are the prompts' (`prompts.create`, …): partials are part of prompts.
 */
import { AdminErrors, assertVisible, crudRoutes, nowIso, slugify, uuidv7, versionedItem, versionedItemFields, versionedRoutes, S, type AnyAdminRoute } from '../../core/index.js';
import { analyseTemplates, findPartial, partialLookup, type PartialRecord, type PartialVersion } from './store.js';
import { MAX_TEMPLATE_LENGTH } from './routes.js';

const resource = 'prompts';

const contentBody: S.JsonSchema = { type: 'string', minLength: 1, maxLength: MAX_TEMPLATE_LENGTH, description: 'A Mustache template.' };
const itemFields = { ...versionedItemFields, version: S.int };
const partialItem = S.record(itemFields);
const partialDetail = S.record({ ...itemFields, content: S.str });
const versionItem = S.record({
  id: S.str,
  version_id: S.str,
  version: S.int,
  name: S.str,
  content: S.str,
  description: S.strOrNull,
  created_by: S.strOrNull,
  created_at: S.str,
  object: S.str,
});

function item(p: PartialRecord): Record<string, unknown> {
  return { ...versionedItem(p, 'prompt_partial'), version: p.version };
}

function versionOf(p: PartialRecord, description: string | null, userId: string | null, now: string): PartialVersion {
  return { id: p.version_id, partial_id: p.id, version: p.version, name: p.name, content: p.content, description, created_at: now, created_by: userId };
}

/**
 * Checks a partial's content: it parses (400 naming `content` and the line) and the partials it
 * includes exist in the workspace, itself excepted (a partial may recurse over nested data; a
 * render bounds the depth).
 */
function assertContent(store: Parameters<typeof partialLookup>[0], content: string, workspaceId: string, self: string): void {
  const lookup = partialLookup(store, workspaceId);
  analyseTemplates([{ text: content, param: 'content' }], (name) => (name === self ? content : lookup(name)));
}

interface CreateBody {
  name: string;
  slug?: string;
  content: string;
  workspace_id?: string;
  version_description?: string;
}

interface UpdateBody {
  name?: string;
  content?: string;
  version_description?: string;
}

export function partialRoutes(): AnyAdminRoute[] {
  const crud = crudRoutes({ path: '/v1/prompts/partials', key: 'slug', resource, scopes: 'prompts', level: 'workspace' });
  return versionedRoutes(crud, {
    noun: 'Partial',
    records: (store) => store.c.promptPartials,
    find: findPartial,
    create: crud.create<CreateBody>({
      summary: 'Create a prompt partial (a template fragment included by slug: `{{> slug}}`)',
      body: {
        type: 'object',
        properties: { name: S.name255, slug: S.slug, content: contentBody, workspace_id: S.workspaceRef, version_description: { type: 'string', maxLength: 1024 } },
        required: ['name', 'content'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str, version_id: S.str, version: S.int, object: S.str }),
      handler({ body, workspace, principal, store }) {
        const slug = body.slug ?? slugify(body.name);
        assertContent(store, body.content, workspace!.id, slug);
        const now = nowIso();
        const partial: PartialRecord = {
          id: uuidv7(),
          slug,
          name: body.name,
          organisation_id: principal.organisation_id,
          workspace_id: workspace!.id,
          content: body.content,
          version_id: uuidv7(),
          version: 1,
          status: 'active',
          owner_id: principal.user_id,
          updated_by: principal.user_id,
          created_at: now,
          last_updated_at: now,
        };
        store.root.transactionSync(() => {
          store.c.promptPartials.insert(partial);
          store.c.promptPartialVersions.insert(versionOf(partial, body.version_description ?? null, principal.user_id, now));
        });
        return { id: partial.id, slug: partial.slug, version_id: partial.version_id, version: 1, object: 'prompt_partial' };
      },
    }),
    update: crud.update<UpdateBody>({
      summary: 'Update a prompt partial: a new version, which every render uses from now on',
      body: {
        type: 'object',
        properties: { name: S.name255, content: contentBody, version_description: { type: 'string', maxLength: 1024 } },
        minProperties: 1,
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str, version_id: S.str, version: S.int, object: S.str }),
      handler({ params, body, principal, store }) {
        const current = assertVisible(principal, findPartial(store, params.slug!), 'Partial');
        if (current.status === 'archived') throw AdminErrors.invalid('The partial is archived.', 'slug');
        if (body.content !== undefined) assertContent(store, body.content, current.workspace_id, current.slug);
        const now = nowIso();
        const versionId = uuidv7();
        const next = store.root.transactionSync(() => {
          const updated = store.c.promptPartials.update(current.id, (p) => ({
            ...p,
            name: body.name ?? p.name,
            content: body.content ?? p.content,
            version_id: versionId,
            version: p.version + 1,
            updated_by: principal.user_id,
            last_updated_at: now,
          }));
          store.c.promptPartialVersions.insert(versionOf(updated, body.version_description ?? null, principal.user_id, now));
          return updated;
        });
        return { id: next.id, slug: next.slug, version_id: next.version_id, version: next.version, object: 'prompt_partial' };
      },
    }),
    list: { summary: 'List prompt partials (active ones unless `status` says otherwise)', item: partialItem, view: item },
    read: { summary: 'Get a prompt partial (its latest version)', response: partialDetail, view: (_store, p) => ({ ...item(p), content: p.content }) },
    delete: { summary: 'Delete (archive) a prompt partial: prompts that include it no longer render' },
    versions: {
      summary: 'List the versions of a prompt partial, newest first',
      records: (store) => store.c.promptPartialVersions,
      index: 'partial',
      item: versionItem,
      view: (_store, partial, v) => ({
        id: partial.id,
        version_id: v.id,
        version: v.version,
        name: v.name,
        content: v.content,
        description: v.description,
        created_by: v.created_by,
        created_at: v.created_at,
        object: 'prompt_partial',
      }),
    },
  });
}
