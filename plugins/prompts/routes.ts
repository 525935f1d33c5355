/**
 * The prompts admin API (`/v1/prompts`), versioned like configs:
 *
 *   POST   /v1/prompts                          create (version 1, the default)
 *   GET    /v1/prompts                          list (active unless `status`), by workspace
 *   GET    /v1/prompts/{id|slug}                the default version's content, variables, labels
 *   PUT    /v1/prompts/{id|slug}                a new immutable version (the default does not move)
 *   DELETE /v1/prompts/{id|slug}                archive
 *   GET    /v1/prompts/{id|slug}/versions       newest first; /versions/{n} one version
 *   PUT    /v1/prompts/{id|slug}/makeDefault    {version}: publish (scope prompts.publish)
 *   GET    /v1/prompts/{id|slug}/diff?from&to   line diff of two versions
 *   PUT    /v1/prompts/{id|slug}/labels/{label} {version}; DELETE removes (scope prompts.publish)
 *   POST   /v1/prompts/{id|slug}/render         {variables, version?|label?, overrides…} → {data}
 *
 * Partials (`/v1/prompts/partials…`, partials.ts) are declared first: the route table takes the
 * first route that matches, so `/v1/prompts/partials/x` is a partial; `partials` is therefore not
 * a prompt slug.
 */
import {
  AdminErrors,
  assertVisible,
  crudRoutes,
  nowIso,
  slugify,
  uuidv7,
  versionedItem,
  versionedItemFields,
  versionedRoutes,
  S,
  type AnyAdminRoute,
  type Store,
} from '../../core/index.js';
import {
  analyseTemplates,
  assertParameters,
  assertShallow,
  assertTarget,
  findPrompt,
  LABEL_PATTERN,
  partialLookup,
  selectVersion,
  templatesOf,
  versionByNumber,
  type PromptContent,
  type PromptRecord,
  type PromptVersion,
  type Template,
} from './store.js';
import { assertVariables, render } from './templates.js';

const resource = 'prompts';

/** Longest template (each text, or each message's content). */
export const MAX_TEMPLATE_LENGTH = 256 * 1024;
export const MAX_MESSAGES = 256;

const ref: S.JsonSchema = { type: 'string', minLength: 1, maxLength: 255 };
const message: S.JsonSchema = {
  type: 'object',
  properties: {
    role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
    content: { type: 'string', maxLength: MAX_TEMPLATE_LENGTH, description: 'A Mustache template.' },
    name: { type: 'string', minLength: 1, maxLength: 64 },
  },
  required: ['role', 'content'],
  additionalProperties: false,
};
const templateBody: S.JsonSchema = {
  type: ['string', 'array'],
  minLength: 1,
  maxLength: MAX_TEMPLATE_LENGTH,
  minItems: 1,
  maxItems: MAX_MESSAGES,
  items: message,
  description: 'a text template (string), or a list of chat messages `{role, content}` whose content strings are Mustache templates',
};
const parametersBody: S.JsonSchema = {
  type: 'object',
  maxProperties: 64,
  description: 'an object of model parameters sent with every render (temperature, max_tokens, top_p, …)',
  properties: {
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    max_tokens: { type: 'integer', minimum: 1 },
    max_completion_tokens: { type: 'integer', minimum: 1 },
    n: { type: 'integer', minimum: 1, maximum: 128 },
    presence_penalty: { type: 'number', minimum: -2, maximum: 2 },
    frequency_penalty: { type: 'number', minimum: -2, maximum: 2 },
    seed: { type: 'integer' },
    stop: { type: ['string', 'array'], maxItems: 4, items: { type: 'string' } },
  },
};
const toolsBody: S.JsonSchema = { type: ['array', 'null'], maxItems: 128, items: { type: 'object', maxProperties: 16 } };
const toolChoiceBody: S.JsonSchema = { type: ['string', 'object', 'null'], maxLength: 64, maxProperties: 8 };
const responseFormatBody: S.JsonSchema = { type: ['object', 'null'], maxProperties: 16 };
const description: S.JsonSchema = { type: 'string', maxLength: 1024 };

const contentFields = {
  template: {},
  model: S.str,
  parameters: S.anyObject,
  tools: {},
  tool_choice: {},
  response_format: {},
  virtual_key: S.strOrNull,
  config: S.strOrNull,
  provider: S.strOrNull,
  variables: S.strings,
  required_variables: S.strings,
  partials: S.strings,
};
const itemFields = { ...versionedItemFields, version: S.int, latest_version: S.int, labels: { type: 'object', additionalProperties: S.int } };
const promptItem = S.record(itemFields);
const promptDetail = S.record({ ...itemFields, ...contentFields, version_description: S.strOrNull });
const versionItem = S.record({
  id: S.str,
  version_id: S.str,
  version: S.int,
  name: S.str,
  description: S.strOrNull,
  is_default: S.bool,
  labels: S.strings,
  ...contentFields,
  created_by: S.strOrNull,
  created_at: S.str,
  object: S.str,
});
const savedAnswer = S.record({ id: S.str, slug: S.str, version_id: S.str, version: S.int, object: S.str });

function item(p: PromptRecord): Record<string, unknown> {
  return { ...versionedItem(p, 'prompt'), version: p.version, latest_version: p.latest_version, labels: p.labels };
}

function content(v: PromptContent): PromptContent {
  return {
    template: v.template,
    model: v.model,
    parameters: v.parameters,
    tools: v.tools,
    tool_choice: v.tool_choice ?? null,
    response_format: v.response_format,
    virtual_key: v.virtual_key,
    config: v.config,
    provider: v.provider,
    variables: v.variables,
    required_variables: v.required_variables,
    partials: v.partials,
  };
}

function versionView(p: PromptRecord, v: PromptVersion): Record<string, unknown> {
  return {
    id: p.id,
    version_id: v.id,
    version: v.version,
    name: v.name,
    description: v.description,
    is_default: p.version === v.version,
    labels: Object.keys(p.labels).filter((l) => p.labels[l] === v.version),
    ...content(v),
    created_by: v.created_by,
    created_at: v.created_at,
    object: 'prompt_version',
  };
}

interface ContentBody {
  template?: Template;
  model?: string;
  parameters?: Record<string, unknown>;
  tools?: unknown[] | null;
  tool_choice?: unknown;
  response_format?: Record<string, unknown> | null;
  virtual_key?: string;
  config?: string;
  provider?: string;
  version_description?: string;
}

interface CreateBody extends ContentBody {
  name: string;
  slug?: string;
  workspace_id?: string;
  template: Template;
  model: string;
}

interface UpdateBody extends ContentBody {
  name?: string;
}

/** Body fields shared by create and update. */
const contentProperties: Record<string, S.JsonSchema> = {
  template: templateBody,
  model: ref,
  parameters: parametersBody,
  tools: toolsBody,
  tool_choice: toolChoiceBody,
  response_format: responseFormatBody,
  virtual_key: ref,
  config: ref,
  provider: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]*$', description: 'Provider id, e.g. openai.' },
  version_description: description,
};

/** Checks a version's content and computes what its templates use. */
function buildContent(store: Store, body: ContentBody, base: PromptContent | undefined, workspaceId: string): PromptContent {
  const template = body.template ?? base!.template;
  const parameters = body.parameters ?? base?.parameters ?? {};
  assertParameters(parameters);
  if (body.tools != null) assertShallow(body.tools, 'tools');
  if (body.tool_choice != null) assertShallow(body.tool_choice, 'tool_choice');
  if (body.response_format != null) assertShallow(body.response_format, 'response_format');
  // A target given replaces the previous one whole (one of the three).
  const targetGiven = body.virtual_key !== undefined || body.config !== undefined || body.provider !== undefined;
  const target = targetGiven
    ? { virtual_key: body.virtual_key ?? null, config: body.config ?? null, provider: body.provider ?? null }
    : { virtual_key: base?.virtual_key ?? null, config: base?.config ?? null, provider: base?.provider ?? null };
  assertTarget(store, target, workspaceId);
  const use = analyseTemplates(templatesOf(template), partialLookup(store, workspaceId));
  return {
    template,
    model: body.model ?? base!.model,
    parameters,
    tools: body.tools !== undefined ? body.tools : (base?.tools ?? null),
    tool_choice: body.tool_choice !== undefined ? body.tool_choice : (base?.tool_choice ?? null),
    response_format: body.response_format !== undefined ? body.response_format : (base?.response_format ?? null),
    ...target,
    variables: [...use.variables].sort(),
    required_variables: [...use.required].sort(),
    partials: [...use.partials].sort(),
  };
}

/** Path segments after `/v1/prompts/` that are routes, not prompts. */
const RESERVED_SLUGS = new Set(['partials']);

function visiblePrompt(principal: Parameters<typeof assertVisible>[0], store: Store, slugOrId: string): PromptRecord {
  return assertVisible(principal, findPrompt(store, slugOrId), 'Prompt');
}

/** A version number from a path or query (`/versions/3`), a 400 naming `param` when it is not one. */
function versionNumber(raw: unknown, param: string): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1) throw AdminErrors.invalid(`${param} must be a version number (1, 2, …).`, param);
  return n;
}

function assertLabel(label: string): void {
  if (!LABEL_PATTERN.test(label)) throw AdminErrors.invalid('A label is 1 to 32 characters of a-z, 0-9, _ and -.', 'label');
}

/** What a render sends: the body a chat or text completion would carry. */
export function renderBody(store: Store, prompt: PromptRecord, version: PromptVersion, variables: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  const partial = partialLookup(store, prompt.workspace_id);
  const vars = variables as Parameters<typeof render>[1];
  const out: Record<string, unknown> = { model: version.model };
  if (typeof version.template === 'string') {
    assertVariables(version.template, variables, partial, 'template');
    out.prompt = render(version.template, vars, partial, 'template');
  } else {
    out.messages = version.template.map((m, i) => {
      const param = `template[${i}].content`;
      assertVariables(m.content, variables, partial, param);
      return { ...m, content: render(m.content, vars, partial, param) };
    });
  }
  Object.assign(out, version.parameters);
  if (version.tools !== null) out.tools = version.tools;
  if (version.tool_choice !== null && version.tool_choice !== undefined) out.tool_choice = version.tool_choice;
  if (version.response_format !== null) out.response_format = version.response_format;
  return Object.assign(out, overrides);
}

export interface RenderBody {
  variables?: Record<string, unknown>;
  version?: number;
  label?: string;
  [override: string]: unknown;
}

/**
 * A render request (`render`, `completions`): the prompt the principal names, the version chosen
 * (`version` or `label`, else the default), and the body it renders to with any parameter
 * overrides. Throws the 400s and 404s both routes answer with.
 */
export function renderRequest(store: Store, principal: Parameters<typeof assertVisible>[0], slug: string, body: RenderBody): { prompt: PromptRecord; version: PromptVersion; body: Record<string, unknown> } {
  const prompt = visiblePrompt(principal, store, slug);
  if (prompt.status === 'archived') throw AdminErrors.notFound('Prompt does not exist.');
  const overrides: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (RENDER_FIELDS.has(key) || key === 'workspace_id') continue;
    if (NOT_OVERRIDES.includes(key)) throw AdminErrors.invalid(`${key} cannot be overridden: it is what the template renders.`, key);
    overrides[key] = body[key];
  }
  assertShallow(overrides, 'body');
  const variables = body.variables ?? {};
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) throw AdminErrors.invalid('variables must be an object.', 'variables');
  assertShallow(variables, 'variables');
  const version = selectVersion(store, prompt, { version: body.version, label: body.label });
  return { prompt, version, body: renderBody(store, prompt, version, variables, overrides) };
}

/** Fields of a render body that are not parameter overrides. */
const RENDER_FIELDS = new Set(['variables', 'version', 'label']);
/** Overrides may not replace the rendered prompt itself. */
const NOT_OVERRIDES = ['messages', 'prompt', 'input'];

export function promptRoutes(): AnyAdminRoute[] {
  const crud = crudRoutes({ path: '/v1/prompts', key: 'slug', resource, scopes: 'prompts', level: 'workspace' });
  const versioned = versionedRoutes(crud, {
    noun: 'Prompt',
    records: (store) => store.c.prompts,
    find: findPrompt,
    create: crud.create<CreateBody>({
      summary: 'Create a prompt template (version 1, the default)',
      body: {
        type: 'object',
        properties: { name: S.name255, slug: S.slug, workspace_id: S.workspaceRef, ...contentProperties },
        required: ['name', 'template', 'model'],
        additionalProperties: false,
      },
      response: savedAnswer,
      handler({ body, workspace, principal, store }) {
        if (body.slug !== undefined && RESERVED_SLUGS.has(body.slug)) throw AdminErrors.invalid(`"${body.slug}" is reserved.`, 'slug');
        const built = buildContent(store, body, undefined, workspace!.id);
        const now = nowIso();
        const prompt: PromptRecord = {
          id: uuidv7(),
          slug: body.slug ?? `pp-${slugify(body.name)}`,
          name: body.name,
          organisation_id: principal.organisation_id,
          workspace_id: workspace!.id,
          version_id: uuidv7(),
          version: 1,
          latest_version: 1,
          labels: {},
          status: 'active',
          owner_id: principal.user_id,
          updated_by: principal.user_id,
          created_at: now,
          last_updated_at: now,
        };
        const version: PromptVersion = {
          id: prompt.version_id,
          prompt_id: prompt.id,
          version: 1,
          name: prompt.name,
          description: body.version_description ?? null,
          ...built,
          created_at: now,
          created_by: principal.user_id,
        };
        store.root.transactionSync(() => {
          store.c.prompts.insert(prompt);
          store.c.promptVersions.insert(version);
        });
        return { id: prompt.id, slug: prompt.slug, version_id: version.id, version: 1, object: 'prompt' };
      },
    }),
    update: crud.update<UpdateBody>({
      summary: 'Update a prompt template: a new immutable version, built on the latest one (the default moves only on publish)',
      body: {
        type: 'object',
        properties: { name: S.name255, ...contentProperties },
        minProperties: 1,
        additionalProperties: false,
      },
      response: savedAnswer,
      handler({ params, body, principal, store }) {
        const current = visiblePrompt(principal, store, params.slug!);
        if (current.status === 'archived') throw AdminErrors.invalid('The prompt is archived.', 'slug');
        const latest = versionByNumber(store, current, current.latest_version)!;
        const built = buildContent(store, body, latest, current.workspace_id);
        const now = nowIso();
        const id = uuidv7();
        const saved = store.root.transactionSync(() => {
          // Read-modify-write: two saves racing get consecutive numbers (the unique index backs it).
          const next = store.c.prompts.update(current.id, (p) => ({
            ...p,
            name: body.name ?? p.name,
            latest_version: p.latest_version + 1,
            updated_by: principal.user_id,
            last_updated_at: now,
          }));
          const version: PromptVersion = {
            id,
            prompt_id: next.id,
            version: next.latest_version,
            name: next.name,
            description: body.version_description ?? null,
            ...built,
            created_at: now,
            created_by: principal.user_id,
          };
          store.c.promptVersions.insert(version);
          return { next, version };
        });
        return { id: saved.next.id, slug: saved.next.slug, version_id: saved.version.id, version: saved.version.version, object: 'prompt' };
      },
    }),
    list: { summary: 'List prompt templates (active ones unless `status` says otherwise)', item: promptItem, view: item },
    read: {
      summary: 'Get a prompt template: its default version\'s content, the variables it needs, its labels',
      response: promptDetail,
      view(store, prompt) {
        const version = store.c.promptVersions.get(prompt.version_id)!;
        return { ...item(prompt), ...content(version), version_description: version.description };
      },
    },
    delete: { summary: 'Delete (archive) a prompt template; its versions stay for the audit trail' },
    versions: {
      summary: 'List the versions of a prompt template, newest first',
      records: (store) => store.c.promptVersions,
      index: 'prompt',
      item: versionItem,
      view: (_store, prompt, v) => versionView(prompt, v),
    },
  });
  return [
    ...versioned,
    crud.member({
      method: 'GET',
      path: '/versions/:version',
      summary: 'Get one version of a prompt template by number',
      action: 'read',
      response: versionItem,
      handler({ params, principal, store }) {
        const prompt = visiblePrompt(principal, store, params.slug!);
        const version = selectVersion(store, prompt, { version: versionNumber(params.version, 'version') });
        return versionView(prompt, version);
      },
    }),
    crud.member<{ version: number }>({
      method: 'PUT',
      path: '/makeDefault',
      summary: 'Publish a version: make it the default that renders and completions use',
      action: 'publish',
      body: { type: 'object', properties: { version: { type: 'integer', minimum: 1 } }, required: ['version'], additionalProperties: false },
      response: S.empty,
      handler({ params, body, principal, store }) {
        const prompt = visiblePrompt(principal, store, params.slug!);
        if (prompt.status === 'archived') throw AdminErrors.invalid('The prompt is archived.', 'slug');
        const version = selectVersion(store, prompt, { version: body.version });
        store.c.prompts.update(prompt.id, (p) => ({ ...p, version: version.version, version_id: version.id, updated_by: principal.user_id, last_updated_at: nowIso() }));
        return {};
      },
    }),
    crud.member<never, { from: number; to: number }>({
      method: 'GET',
      path: '/diff',
      summary: 'Line diff between two versions of a prompt template (templates, then the rest as JSON)',
      action: 'read',
      query: {
        properties: { from: { type: 'integer', minimum: 1 }, to: { type: 'integer', minimum: 1 } },
        required: ['from', 'to'],
      },
      response: S.record({
        from: S.int,
        to: S.int,
        patch: S.str,
        changes: { type: 'array', items: S.record({ op: { type: 'string', enum: ['add', 'remove', 'same'] }, value: S.str }) },
        object: S.str,
      }),
      async handler({ params, query, principal, store }) {
        const prompt = visiblePrompt(principal, store, params.slug!);
        const a = selectVersion(store, prompt, { version: query.from });
        const b = selectVersion(store, prompt, { version: query.to });
        const textA = diffText(a);
        const textB = diffText(b);
        // Loaded with the first diff asked for, not with every start.
        const { createTwoFilesPatch, diffLines } = await import('diff');
        return {
          from: a.version,
          to: b.version,
          patch: createTwoFilesPatch(`v${a.version}`, `v${b.version}`, textA, textB),
          changes: diffLines(textA, textB).map((c) => ({ op: c.added ? 'add' : c.removed ? 'remove' : 'same', value: c.value })),
          object: 'prompt_diff',
        };
      },
    }),
    crud.member<{ version: number }>({
      method: 'PUT',
      path: '/labels/:label',
      summary: 'Point a label (`production`, `staging`, …) at a version',
      action: 'label',
      scope: 'prompts.publish',
      body: { type: 'object', properties: { version: { type: 'integer', minimum: 1 } }, required: ['version'], additionalProperties: false },
      response: S.empty,
      handler({ params, body, principal, store }) {
        assertLabel(params.label!);
        const prompt = visiblePrompt(principal, store, params.slug!);
        const version = selectVersion(store, prompt, { version: body.version });
        store.c.prompts.update(prompt.id, (p) => ({
          ...p,
          labels: { ...p.labels, [params.label!]: version.version },
          updated_by: principal.user_id,
          last_updated_at: nowIso(),
        }));
        return {};
      },
    }),
    crud.member({
      method: 'DELETE',
      path: '/labels/:label',
      summary: 'Remove a label',
      action: 'unlabel',
      scope: 'prompts.publish',
      response: S.empty,
      handler({ params, principal, store }) {
        assertLabel(params.label!);
        const prompt = visiblePrompt(principal, store, params.slug!);
        if (!Object.prototype.hasOwnProperty.call(prompt.labels, params.label!)) throw AdminErrors.notFound(`The prompt has no label "${params.label}".`, 'label');
        store.c.prompts.update(prompt.id, (p) => {
          const labels = { ...p.labels };
          delete labels[params.label!];
          return { ...p, labels, updated_by: principal.user_id, last_updated_at: nowIso() };
        });
        return {};
      },
    }),
    crud.member<RenderBody>({
      method: 'POST',
      path: '/render',
      summary:
        'Render a prompt template with variables (default version, or `version` / `label`) into the request body a completion would send, with any model parameter overrides; calls no model',
      action: 'render',
      scope: 'prompts.read',
      readOnly: true,
      body: {
        type: 'object',
        properties: {
          variables: { type: 'object', maxProperties: 1024, description: 'Template variables (JSON values).' },
          version: { type: 'integer', minimum: 1 },
          label: { type: 'string', pattern: LABEL_PATTERN.source },
          ...parametersBody.properties as Record<string, S.JsonSchema>,
          model: ref,
          tools: toolsBody,
          tool_choice: toolChoiceBody,
          response_format: responseFormatBody,
        },
        maxProperties: 128,
        additionalProperties: true,
      },
      response: S.record({ data: S.anyObject }),
      handler({ params, body, principal, store }) {
        return { data: renderRequest(store, principal, params.slug!, body).body };
      },
    }),
  ];
}

/** A version as diff text: the templates line by line, then everything else as indented JSON. */
function diffText(v: PromptVersion): string {
  const templates =
    typeof v.template === 'string' ? v.template : v.template.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
  const { template: _t, variables: _v, required_variables: _r, partials: _p, ...rest } = content(v);
  return `${templates}\n\n--- settings ---\n${JSON.stringify({ ...rest, description: v.description }, null, 2)}\n`;
}
