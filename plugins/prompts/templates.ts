/**
 * Mustache templates for stored prompts: parse (at save), the variables a template needs, and
 * render (per call), with no code ever run and no file ever read.
 *
 * - **No HTML escaping.** `{{x}}` and `{{{x}}}` render the same: a prompt is not HTML, and
 *   Mustache's default escaping would send `&lt;` to a model for `<`. The escape function is
 *   passed per render (Mustache 4.2's `config.escape`); the package's global `Mustache.escape`
 *   is never touched, so another user of the package in the process keeps its own behaviour.
 *   A value that is an object or array renders as its JSON text (not `[object Object]`).
 * - **No code.** Variables come from JSON, so a view holds no functions of its own; lookups go
 *   through {@link SafeContext}, which reads own properties only, so `{{constructor}}` or
 *   `{{items.map}}` cannot reach a prototype method (which Mustache would call). Lambdas and
 *   higher-order sections are therefore impossible.
 * - **Partials** come only from the store, through a lookup function over an in-memory map the
 *   caller built; Mustache itself never loads a file (that exists only in its CLI). Nesting is
 *   bounded ({@link MAX_PARTIAL_DEPTH}: a partial including itself is a 400, not a stack overflow),
 *   and so is the work of one render ({@link MAX_RENDER_WORK}).
 * - **Caching.** A template string is parsed once per process: the parse trees live in this
 *   module's own `Writer` (keyed by template text, so every version of a prompt with the same
 *   text shares one), and the variables of a version are computed at save time and stored.
 */
import Mustache from 'mustache';
import { defineError, type GatewayError } from '../../core/index.js';

export const invalidTemplate = defineError(400, 'invalid_request_error', 'invalid_template', 'The template does not parse.');
export const missingVariable = defineError(400, 'invalid_request_error', 'missing_variable', 'A variable the template needs is missing.');
export const unknownPartial = defineError(400, 'invalid_request_error', 'unknown_partial', 'The template includes a partial that does not exist.');
export const renderTooLarge = defineError(400, 'invalid_request_error', 'render_too_large', 'The rendered prompt is too large.');

/** Deepest nesting of partials in one render. */
export const MAX_PARTIAL_DEPTH = 16;
/** Deepest nesting of sections in one template (rendering recurses per level). */
export const MAX_SECTION_DEPTH = 32;
/** Characters a render may produce, counted at every section level (bounds `{{#a}}{{#b}}…` blow-ups). */
export const MAX_RENDER_WORK = 16 * 1024 * 1024;

/** A Mustache token: [type, value, start, end, children?, …]. */
type Token = [string, string, number, number, Token[]?, ...unknown[]];

/** Values a view may hold: what JSON parses to. */
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** Own-property lookup with Mustache's dotted-name semantics (a miss goes to the parent context). */
function resolve(view: unknown, name: string): { hit: boolean; value: unknown } {
  const names = name.split('.');
  let current: unknown = view;
  for (let i = 0; i < names.length; i++) {
    const key = names[i]!;
    // Mustache lets a dotted name read a primitive's own properties (`{{title.length}}`), not a bare one.
    const holder = current !== null && typeof current === 'object' ? current : i > 0 && typeof current === 'string' ? Object(current) : undefined;
    if (holder === undefined || !Object.prototype.hasOwnProperty.call(holder, key)) return { hit: false, value: undefined };
    current = (holder as Record<string, unknown>)[key];
  }
  return { hit: true, value: current };
}

/** A context that reads own properties only, and never calls a function (there are none in JSON). */
class SafeContext extends Mustache.Context {
  constructor(view: unknown, parent?: SafeContext) {
    super(view, parent);
  }

  *#views(): Generator<unknown> {
    yield this.view;
    for (let ctx = this.parent; ctx !== undefined; ctx = ctx.parent) yield ctx.view;
  }

  override push(view: unknown): SafeContext {
    return new SafeContext(view, this);
  }

  override lookup(name: string): unknown {
    if (name === '.') return this.view;
    // This context, then its parents (the enclosing sections), innermost first.
    for (const view of this.#views()) {
      const { hit, value } = resolve(view, name);
      if (hit) return typeof value === 'function' ? undefined : value;
    }
    return undefined;
  }
}

/** No HTML escaping: strings as they are, numbers and booleans as text, objects and arrays as JSON. */
function plain(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** One render's state: partial depth and work done, for the bounds. */
class BoundedWriter extends Mustache.Writer {
  depth = 0;
  work = 0;

  override renderPartial(token: string[], context: Mustache.Context, partials: Mustache.PartialsOrLookupFn | undefined, config?: unknown): string {
    if (++this.depth > MAX_PARTIAL_DEPTH) {
      throw unknownPartialDepth(token[1]!);
    }
    try {
      return super.renderPartial(token, context, partials, config as Mustache.RenderOptions);
    } finally {
      this.depth--;
    }
  }

  override renderTokens(tokens: string[][], context: Mustache.Context, partials?: Mustache.PartialsOrLookupFn, originalTemplate?: string, config?: Mustache.RenderOptions): string {
    const out = super.renderTokens(tokens, context, partials, originalTemplate, config);
    this.work += out.length;
    if (this.work > MAX_RENDER_WORK) throw renderTooLarge(`The rendered prompt exceeds ${MAX_RENDER_WORK} characters.`);
    return out;
  }
}

function unknownPartialDepth(name: string): GatewayError {
  return invalidTemplate(`Partials nest deeper than ${MAX_PARTIAL_DEPTH} levels (at "${name}"): does a partial include itself?`, { param: 'template' });
}

/** Distinct template texts whose parse trees are kept; past it the cache starts over. */
const MAX_CACHED_TEMPLATES = 4096;

/**
 * Parse trees by template text (and tags), shared by every writer of this module: a version's
 * template and its partials are parsed once per process. Bounded, so templates saved and
 * deleted over months do not grow it for ever.
 */
const cache = new Map<string, unknown>();
const templateCache = {
  set(key: string, value: unknown): void {
    if (cache.size >= MAX_CACHED_TEMPLATES) cache.clear();
    cache.set(key, value);
  },
  get: (key: string): unknown => cache.get(key),
  clear: (): void => cache.clear(),
};

function writer<W extends Mustache.Writer>(w: W): W {
  (w as unknown as { templateCache: typeof templateCache }).templateCache = templateCache;
  return w;
}

const parser = writer(new Mustache.Writer());

/** The parse tree of a template; throws Mustache's error (with a position) when it does not parse. */
function tokensOf(template: string): Token[] {
  return parser.parse(template) as Token[];
}

/** 1-based line of character `pos`. */
function lineOf(text: string, pos: number): number {
  let line = 1;
  for (let i = 0; i < pos && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** What a template (or a set of them) uses, from its parse tree. */
export interface TemplateUse {
  /** Top-level variable and section names (the names a caller may pass). */
  variables: Set<string>;
  /** Top-level `{{x}}`, `{{{x}}}`, `{{&x}}` outside any section: a render without them is a 400. */
  required: Set<string>;
  /** Partial names included anywhere. */
  partials: Set<string>;
  /** Partials included outside any section: their variables are the template's too. */
  topPartials: Set<string>;
}

export const emptyUse = (): TemplateUse => ({ variables: new Set(), required: new Set(), partials: new Set(), topPartials: new Set() });

/**
 * Parses `template` (a 400 `invalid_template` naming `param` and the line) and adds what it uses
 * to `use`. Names inside a section belong to the section's items (or the outer context): only
 * the section's own name is a variable of the template.
 */
export function analyse(template: string, param: string, use: TemplateUse = emptyUse()): TemplateUse {
  let tokens: Token[];
  try {
    tokens = tokensOf(template);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /at (\d+)$/.exec(message);
    const line = at === null ? 1 : lineOf(template, Number(at[1]));
    throw invalidTemplate(`${param} does not parse, line ${line}: ${message.replace(/ at \d+$/, '')}.`, { param });
  }
  walk(tokens, 0, use, param);
  return use;
}

function walk(tokens: Token[], depth: number, use: TemplateUse, param: string): void {
  if (depth > MAX_SECTION_DEPTH) throw invalidTemplate(`${param} nests sections deeper than ${MAX_SECTION_DEPTH} levels.`, { param });
  for (const token of tokens) {
    const [type, value] = token;
    if (type === '>') {
      use.partials.add(value);
      if (depth === 0) use.topPartials.add(value);
    }
    else if (depth === 0 && (type === 'name' || type === '&' || type === '{')) {
      use.variables.add(value);
      if (value !== '.') use.required.add(value);
    } else if (type === '#' || type === '^') {
      if (depth === 0) use.variables.add(value);
      walk(token[4] ?? [], depth + 1, use, param);
    }
  }
}

/** Whether `variables` provides `name` (a dotted name must resolve all the way). */
export function provides(variables: Record<string, unknown>, name: string): boolean {
  return resolve(variables, name).hit;
}

/** Partial text by name, for one render; undefined: it does not exist. */
export type PartialLookup = (name: string) => string | undefined;

/**
 * Renders `template` with `variables` and partials from `partial`. A partial that does not
 * resolve is a 400 `unknown_partial`, not an empty string (it was checked at save; it has been
 * archived since).
 */
export function render(template: string, variables: Record<string, Json>, partial: PartialLookup, param: string): string {
  const bounded = writer(new BoundedWriter());
  const lookup = (name: string): string => {
    const text = partial(name);
    if (text === undefined) throw unknownPartial(`The partial "${name}" included by ${param} does not exist.`, { param });
    return text;
  };
  const tokens = tokensOf(template);
  return bounded.renderTokens(tokens as unknown as string[][], new SafeContext(variables), lookup, template, { escape: plain });
}

/**
 * The required variables of `template` and of the partials it includes at top level (as they are
 * now), checked before rendering: a 400 `missing_variable` naming the first one missing.
 */
export function assertVariables(template: string, variables: Record<string, unknown>, partial: PartialLookup, param: string): void {
  const seen = new Set<string>();
  const check = (text: string, depth: number): void => {
    for (const token of tokensOf(text)) {
      const [type, value] = token;
      if ((type === 'name' || type === '&' || type === '{') && value !== '.' && !provides(variables, value)) {
        throw missingVariable(`The variable "${value}" is missing (needed by ${param}).`, { param: `variables.${value}` });
      }
      // Top-level partials add their own required variables; a cycle is the render's 400.
      if (type === '>' && depth < MAX_PARTIAL_DEPTH && !seen.has(value)) {
        seen.add(value);
        const text = partial(value);
        if (text !== undefined) check(text, depth + 1);
      }
    }
  };
  check(template, 0);
}
