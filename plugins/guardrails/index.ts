/**
 * The `guardrails` plugin: checks on what goes to a model and on what comes back.
 *
 *   onRequestBody      which guardrails apply (config leaves, key, workspace: resolve.ts); when every
 *                      leaf has the same input guardrails they run here, before rate limits and the
 *                      cache: deny ▶ 446 and no upstream call; redact ▶ the body is rewritten in
 *                      its own dialect; otherwise the results ride along
 *   onUpstreamRequest  leaves with their own input guardrails run per attempt
 *   onResponseHeaders  whole answers (held for it: ctx.holdAnswer): output guardrails; deny ▶ 446,
 *                      redact or a webhook's rewrite ▶ the answer is replaced; the compact results
 *                      go out in `x-gateway-guardrails`
 *   onResponseChunk    streams: span checks as the text flows, holding back only what could still
 *                      complete a match (stream.ts); deny ▶ `event: error` before the span is sent
 *   onResponseStreamEnd  whole-text checks on the streamed text; deny ▶ `event: error`
 *   onResponseEnd      `async: true` guardrails run now, after the client has its answer; feedback
 *                      (`on_fail` / `on_success`) is recorded; results go to the log record,
 *                      metrics and analytics (ctx var `guardrailResults`)
 *
 *   checkTexts (service)  texts that are not a model request or answer (MCP tool arguments and
 *                      results): the key's and workspace's guardrails, results in the same
 *                      `guardrailResults`, async ones settled in onResponseEnd
 *
 * A request no guardrail applies to costs a few property reads per hook.
 */
import {
  actingWorkspace,
  adminRoutes,
  definePlugin,
  optionalService,
  PASS,
  reply,
  type EventStream,
  type GatewayContext,
  type GuardrailService,
  type ResponseHead,
  type SseEvent,
  type TextSubject,
  type TextVerdict,
  type UpstreamAttempt,
} from '../../core/index.js';
import { CheckRegistry, type Guardrail } from './registry.js';
import { builtinChecks } from './checks/index.js';
import { guardrailRoutes } from './admin.js';
import { configGuardrailLists, Resolver, type LeafGuardrails, type RequestGuardrails } from './resolve.js';
import { runGuardrails, redactSpans, spansOf, type Subject, type Verdicts } from './engine.js';
import { answerParts, INPUT_ROUTES, mapAnswerText, mapRequestText, OUTPUT_ROUTES, requestParts } from './text.js';
import { StreamGuard } from './stream.js';
import { GuardrailDenied } from './errors.js';
import { createCheckPool } from './pool.js';

export interface GuardrailsOptions {
  /** Texts from this many characters on are checked on the worker pool (built-in checks). Default 65536. */
  worker_threshold: number;
  /** Worker threads for large texts, started on first use. Default 2. */
  worker_threads: number;
  /** Large checks that may wait for a thread; beyond it a check errors (and fails closed). Default 1000. */
  worker_max_queue: number;
}

const optionsSchema = {
  type: 'object',
  properties: {
    worker_threshold: { type: 'integer', minimum: 1024, default: 65536 },
    worker_threads: { type: 'integer', minimum: 1, maximum: 64, default: 2 },
    worker_max_queue: { type: 'integer', minimum: 0, default: 1000 },
  },
  additionalProperties: false,
};
import type { HookResults } from '../../core/index.js';

type Json = Record<string, unknown>;

/** The state of one request with guardrails. */
interface RequestState {
  plan: RequestGuardrails;
  results: HookResults;
  /** Async guardrails and what they look at, run after the response. */
  later: Array<{ guardrails: Guardrail[]; subject: Subject }>;
  /** Input guardrails already ran: for every leaf before routing (`all`), or for these leaf paths. */
  inputBeforeRouting: boolean;
  ranInput: Set<string> | undefined;
  outputDone: boolean;
  stream: StreamGuard | undefined;
}

declare module '../../core/context.js' {
  interface ContextVars {
    /** The request's guardrail state (this plugin's). */
    guardrailState: RequestState;
  }
}

function isPromise<T>(v: unknown): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** A list split into the guardrails that run now and the `async` ones, once per (shared) list. */
const splits = new WeakMap<Guardrail[], { now: Guardrail[]; later: Guardrail[] }>();

function split(list: Guardrail[]): { now: Guardrail[]; later: Guardrail[] } {
  let s = splits.get(list);
  if (s === undefined) {
    const deferred = list.filter((g) => g.async);
    s = { now: deferred.length === 0 ? list : list.filter((g) => !g.async), later: deferred };
    splits.set(list, s);
  }
  return s;
}

function sync(list: Guardrail[]): Guardrail[] {
  return split(list).now;
}

function later(list: Guardrail[]): Guardrail[] {
  return split(list).later;
}

/** The compact results header: counts, and the ids of what failed. */
function summaryHeader(results: HookResults): string | undefined {
  let passed = 0;
  let failed = 0;
  let ids = '';
  for (const list of [results.before_request_hooks, results.after_request_hooks]) {
    for (const o of list) {
      if (o.verdict) {
        passed++;
        continue;
      }
      if (failed++ < 16) ids += (ids === '' ? '' : ',') + o.id.replace(/[^A-Za-z0-9._#:-]/g, '_');
    }
  }
  if (passed + failed === 0) return undefined;
  return `passed=${passed}; failed=${failed}${ids !== '' ? `; failed_ids=${ids}` : ''}`;
}

export default definePlugin<GuardrailsOptions>({
  name: 'guardrails',
  configSchema: optionsSchema,
  setup(app, options) {
    const registry = new CheckRegistry(app.store);
    const builtins = builtinChecks({ hosts: app.config.security.custom_hosts });
    for (const check of builtins) registry.register(check);
    const builtinIds = new Set(builtins.map((c) => c.id));
    const pool = createCheckPool({ threshold: options.worker_threshold ?? 65536, threads: options.worker_threads ?? 2, maxQueue: options.worker_max_queue ?? 1000, builtin: builtinIds });
    const resolver = new Resolver(registry, app.store);
    const feedback = optionalService(app, 'feedback', 'guardrail on_fail / on_success feedback is not recorded');

    const service: GuardrailService = {
      register: (check) => {
        // A plugin's check replacing a built-in one runs on the main thread (workers only know the built-ins).
        builtinIds.delete(check.id);
        registry.register(check);
      },
      ids: () => registry.ids(),
      validate: (list, param, workspaceId) => registry.validate(list, param, workspaceId),
      validateConfig(config, param, workspaceId) {
        for (const { list, path } of configGuardrailLists(config, param)) {
          const err = registry.validate(list, path, workspaceId);
          if (err !== null) return err;
        }
        return null;
      },
      checkTexts: (ctx, phase, parts, about) => checkTexts(ctx, phase, parts, about),
      checksTexts: (ctx, phase) => textGuardrails(ctx, phase) !== undefined,
    };
    app.provide('guardrails', service);

    function subjectOf(ctx: GatewayContext, phase: 'input' | 'output', parts: string[], response: Json | undefined): Subject {
      const route = ctx.route.kind === 'model' ? ctx.route.name : '';
      const model = phase === 'output' && typeof response?.model === 'string' ? response.model : typeof ctx.body?.model === 'string' ? ctx.body.model : undefined;
      return {
        phase,
        route,
        parts,
        request: ctx.body,
        response,
        model,
        provider: ctx.provider ?? ctx.target?.provider,
        metadata: ctx.metadata,
        requestSignal: () => ctx.signal,
        pool,
      };
    }

    /**
     * Guardrails on texts that are not a model request or answer (MCP arguments and results): the
     * key's and workspace's (there is no routing config on those routes, so one leaf, `config`).
     * The request's state is made on first use, so `onResponseEnd` runs the async ones, records
     * feedback and hands the results to the log record as for a model request.
     */
    /** The key's and workspace's guardrails for texts in `phase` (with the request's plan), or undefined when there are none. */
    function textGuardrails(ctx: GatewayContext, phase: 'input' | 'output'): { plan: RequestGuardrails; guardrails: Guardrail[] } | undefined {
      const plan = ctx.get('guardrailState')?.plan ?? resolver.resolve(ctx, actingWorkspace(app, ctx));
      if (plan === undefined) return undefined;
      const leaf = plan.leaves.get('config') ?? (plan.leaves.size === 1 ? plan.leaves.values().next().value : undefined);
      const guardrails = phase === 'input' ? leaf?.input : leaf?.output;
      return guardrails === undefined || guardrails.length === 0 ? undefined : { plan, guardrails };
    }

    function checkTexts(ctx: GatewayContext, phase: 'input' | 'output', parts: string[] | (() => string[]), about: TextSubject): ReturnType<GuardrailService['checkTexts']> {
      const found = textGuardrails(ctx, phase);
      if (found === undefined) return undefined;
      const { plan, guardrails } = found;
      let state = ctx.get('guardrailState');
      if (state === undefined) {
        state = { plan, results: { before_request_hooks: [], after_request_hooks: [] }, later: [], inputBeforeRouting: true, ranInput: undefined, outputDone: true, stream: undefined };
        ctx.set('guardrailState', state);
        ctx.set('guardrailResults', state.results);
      }
      const s = state;
      const subject: Subject = {
        phase,
        route: about.route,
        parts: typeof parts === 'function' ? parts() : parts,
        request: undefined,
        response: undefined,
        model: about.model,
        provider: about.provider,
        metadata: ctx.metadata,
        requestSignal: () => ctx.signal,
        pool,
      };
      const deferred = later(guardrails);
      const apply = (v: Verdicts): TextVerdict => {
        (phase === 'input' ? s.results.before_request_hooks : s.results.after_request_hooks).push(...v.outcomes);
        if (deferred.length > 0) s.later.push({ guardrails: deferred, subject: { ...subject, parts: v.parts } });
        return { denied: v.denied, parts: v.parts, redacted: v.redacted, outcomes: v.outcomes };
      };
      const v = runGuardrails(sync(guardrails), subject);
      return isPromise<Verdicts>(v) ? v.then(apply) : apply(v);
    }

    /** The leaf that answered (or is being tried): its guardrails. */
    function leafOf(ctx: GatewayContext, state: RequestState): LeafGuardrails | undefined {
      const leaves = state.plan.leaves;
      return leaves.get(ctx.target?.path ?? 'config') ?? (leaves.size === 1 ? leaves.values().next().value : undefined);
    }

    /** Records input verdicts; throws the 446 on a denial. */
    function afterInput(state: RequestState, v: Verdicts): void {
      state.results.before_request_hooks.push(...v.outcomes);
      if (v.denied) throw new GuardrailDenied(state.results, 'input');
    }

    /** Input guardrails of the whole request (every leaf the same): the body is rewritten in its dialect. */
    function checkInput(ctx: GatewayContext, state: RequestState, guardrails: Guardrail[]): void | Promise<void> {
      const route = ctx.route.kind === 'model' ? ctx.route.name : '';
      const body = ctx.body!;
      const subject = subjectOf(ctx, 'input', requestParts(route, body), undefined);
      const deferred = later(guardrails);
      const apply = (v: Verdicts): void => {
        afterInput(state, v);
        if (v.parts !== subject.parts) {
          let i = 0;
          ctx.setBody(mapRequestText(route, ctx.body!, () => v.parts[i++]!));
        }
        if (v.transformed?.request !== undefined) ctx.setBody(v.transformed.request);
        if (deferred.length > 0) state.later.push({ guardrails: deferred, subject: { ...subject, parts: v.parts } });
      };
      const v = runGuardrails(sync(guardrails), subject);
      return isPromise<Verdicts>(v) ? v.then(apply) : apply(v);
    }

    /** Input guardrails of one leaf, per attempt: redaction rewrites the text of the outgoing body. */
    function checkAttempt(ctx: GatewayContext, state: RequestState, path: string, guardrails: Guardrail[], attempt: UpstreamAttempt): void | Promise<void> {
      const route = ctx.route.kind === 'model' ? ctx.route.name : '';
      const ran = (state.ranInput ??= new Set());
      const first = !ran.has(path);
      ran.add(path);
      const subject = subjectOf(ctx, 'input', requestParts(route, ctx.body!), undefined);
      const apply = (v: Verdicts): void => {
        if (first) afterInput(state, v);
        else if (v.denied) throw new GuardrailDenied(state.results, 'input');
        const redacting = guardrails.filter((g) => g.redact);
        if (v.redacted > 0 && attempt.body !== null) attempt.body = redactOutgoing(attempt.body, redacting);
        if (first && later(guardrails).length > 0) state.later.push({ guardrails: later(guardrails), subject });
      };
      const v = runGuardrails(sync(guardrails), subject);
      return isPromise<Verdicts>(v) ? v.then(apply) : apply(v);
    }

    /** Output guardrails on a whole answer: a replacement reply when it was rewritten. */
    function checkAnswer(ctx: GatewayContext, state: RequestState, head: ResponseHead, guardrails: Guardrail[]) {
      const route = ctx.route.kind === 'model' ? ctx.route.name : '';
      let answer: Json;
      try {
        const parsed: unknown = JSON.parse(typeof head.body === 'string' ? head.body : head.body!.toString('utf8'));
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
        answer = parsed as Json;
      } catch {
        return undefined;
      }
      const subject = subjectOf(ctx, 'output', answerParts(route, answer), answer);
      const deferred = later(guardrails);
      const apply = (v: Verdicts) => {
        state.results.after_request_hooks.push(...v.outcomes);
        if (deferred.length > 0) state.later.push({ guardrails: deferred, subject: { ...subject, parts: v.parts } });
        if (v.denied) throw new GuardrailDenied(state.results, 'output');
        let next = answer;
        if (v.parts !== subject.parts) {
          let i = 0;
          next = mapAnswerText(route, answer, () => v.parts[i++]!);
        }
        if (v.transformed?.response !== undefined) next = v.transformed.response;
        if (next === answer) return undefined;
        const headers: Record<string, string | string[]> = { ...head.headers };
        delete headers['content-length'];
        const summary = summaryHeader(state.results);
        if (summary !== undefined) headers['x-gateway-guardrails'] = summary;
        return reply(head.status, next, headers as Record<string, string>);
      };
      const v = runGuardrails(sync(guardrails), subject);
      return isPromise<Verdicts>(v) ? v.then(apply) : apply(v);
    }

    /** Async guardrails, feedback and the results for observers, once the client has its answer. */
    async function settle(ctx: GatewayContext, state: RequestState): Promise<void> {
      for (const job of state.later) {
        try {
          const v = await runGuardrails(job.guardrails, job.subject);
          const list = job.subject.phase === 'input' ? state.results.before_request_hooks : state.results.after_request_hooks;
          list.push(...v.outcomes);
        } catch (err) {
          ctx.log.warn('async guardrail failed', { err });
        }
      }
      state.later = [];
      recordFeedback(ctx, state);
      ctx.set('guardrailResults', state.results);
    }

    function recordFeedback(ctx: GatewayContext, state: RequestState): void {
      if (!state.plan.anyFeedback) return;
      const principal = ctx.get('principal');
      const store = feedback();
      if (store === undefined || principal === undefined) return;
      const all = [...state.results.before_request_hooks, ...state.results.after_request_hooks];
      const byId = new Map<string, Guardrail>();
      for (const leaf of state.plan.leaves.values()) for (const g of [...leaf.input, ...leaf.output]) byId.set(g.id, g);
      for (const o of all) {
        const g = byId.get(o.id);
        const f = o.verdict ? g?.onSuccess : g?.onFail;
        if (f === undefined) continue;
        void store
          .record({
            trace_id: ctx.traceId,
            value: f.value,
            weight: f.weight,
            metadata: { ...f.metadata, guardrail_id: o.id, verdict: o.verdict },
            workspace_id: actingWorkspace(app, ctx),
            organisation_id: principal.organisation_id,
            api_key_id: principal.key_id,
          })
          .catch((err: unknown) => ctx.log.warn('guardrail feedback not recorded', { err }));
      }
    }

    function streamGuard(ctx: GatewayContext, state: RequestState): StreamGuard | undefined {
      if (state.stream !== undefined) return state.stream;
      const leaf = leafOf(ctx, state);
      const route = ctx.route.kind === 'model' ? ctx.route.name : '';
      if (leaf === undefined || leaf.output.length === 0 || !OUTPUT_ROUTES.has(route)) return undefined;
      state.stream = new StreamGuard(route, sync(leaf.output));
      const deferred = later(leaf.output);
      if (deferred.length > 0) {
        // Run after the response, on the text as it was sent.
        const guard = state.stream;
        const subject = subjectOf(ctx, 'output', [], undefined);
        state.later.push({
          guardrails: deferred,
          get subject() {
            return { ...subject, parts: [guard.text] };
          },
        });
      }
      return state.stream;
    }

    function fail(state: RequestState, stream: EventStream): null {
      state.results.after_request_hooks.push(...state.stream!.spanOutcomes());
      state.outputDone = true;
      stream.fail(new GuardrailDenied(state.results, 'output'));
      return null;
    }

    return {
      onRequestBody(ctx) {
        if (ctx.route.kind !== 'model' || !INPUT_ROUTES.has(ctx.route.name) || ctx.body === undefined) return;
        const plan = resolver.resolve(ctx, actingWorkspace(app, ctx));
        // No guardrail applies to this model call (nor to any text of it: textGuardrails resolves
        // the same): none of this plugin's later hooks has anything to do for it.
        if (plan === undefined) return PASS;
        const state: RequestState = { plan, results: { before_request_hooks: [], after_request_hooks: [] }, later: [], inputBeforeRouting: false, ranInput: undefined, outputDone: false, stream: undefined };
        ctx.set('guardrailState', state);
        ctx.set('guardrailResults', state.results);
        if (plan.anyOutput && OUTPUT_ROUTES.has(ctx.route.name)) {
          ctx.checksAnswer = true;
          if (!ctx.wantsStream) ctx.holdAnswer = true;
        }
        if (plan.uniformInput !== undefined && plan.uniformInput.length > 0) {
          state.inputBeforeRouting = true;
          return checkInput(ctx, state, plan.uniformInput);
        }
        return undefined;
      },

      onUpstreamRequest(ctx, attempt) {
        const state = ctx.get('guardrailState');
        if (state === undefined || state.inputBeforeRouting || !state.plan.anyInput) return;
        const path = attempt.target.path ?? 'config';
        const guardrails = state.plan.leaves.get(path)?.input;
        if (guardrails === undefined || guardrails.length === 0) return;
        return checkAttempt(ctx, state, path, guardrails, attempt);
      },

      onResponseHeaders(ctx, head) {
        const state = ctx.get('guardrailState');
        if (state === undefined) return;
        let verdict: ReturnType<typeof checkAnswer> = undefined;
        if (!state.outputDone && head.body !== undefined && !head.sse && head.status >= 200 && head.status < 300) {
          state.outputDone = true;
          const output = leafOf(ctx, state)?.output;
          if (output !== undefined && output.length > 0 && ctx.route.kind === 'model' && OUTPUT_ROUTES.has(ctx.route.name)) verdict = checkAnswer(ctx, state, head, output);
        }
        const header = (): void => {
          const summary = summaryHeader(state.results);
          if (summary !== undefined) head.headers['x-gateway-guardrails'] = summary;
        };
        if (isPromise<ReturnType<typeof reply> | undefined>(verdict)) {
          return verdict.then((r) => {
            header();
            return r;
          });
        }
        header();
        return verdict;
      },

      onResponseChunk(ctx, event: SseEvent, stream) {
        const state = ctx.get('guardrailState');
        if (state === undefined || state.outputDone) return undefined;
        const guard = streamGuard(ctx, state);
        if (guard === undefined || guard.idle) return undefined;
        const out = guard.event(event);
        if (guard.denied) return fail(state, stream);
        return out;
      },

      onResponseStreamEnd(ctx, stream) {
        const state = ctx.get('guardrailState');
        const guard = state?.stream;
        if (state === undefined || guard === undefined || state.outputDone) return;
        const rest = guard.end();
        if (guard.denied) {
          fail(state, stream);
          return;
        }
        if (rest !== null && rest.length > 0) stream.release(rest);
        state.outputDone = true;
        state.results.after_request_hooks.push(...guard.spanOutcomes());
        if (guard.endGuardrails.length === 0) return;
        const v = runGuardrails(guard.endGuardrails, subjectOf(ctx, 'output', [guard.text], undefined));
        const apply = (r: Verdicts): void => {
          state.results.after_request_hooks.push(...r.outcomes);
          if (r.denied) stream.fail(new GuardrailDenied(state.results, 'output'));
          else if (guard.tail.length > 0) stream.release(guard.tail);
        };
        if (isPromise<Verdicts>(v)) return v.then(apply);
        apply(v);
        return undefined;
      },

      onResponseEnd(ctx) {
        const state = ctx.get('guardrailState');
        if (state === undefined) return;
        if (state.later.length > 0) return settle(ctx, state);
        recordFeedback(ctx, state);
        return undefined;
      },

      routes: adminRoutes(app, guardrailRoutes(service)),
      close: () => pool.close(),
    };
  },
});

/**
 * A leaf's redaction on the outgoing body (any dialect): every string value of the JSON passes
 * through the redacting guardrails' span checks. Used only when leaves differ in their input
 * guardrails; otherwise the client's body is rewritten in its own dialect before routing.
 */
function redactOutgoing(body: Buffer | string, guardrails: Guardrail[]): Buffer | string {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return body;
  }
  const redact = (s: string): string => {
    // Inline data (images, audio) is not text.
    if (s.length > 1 << 16 || s.startsWith('data:')) return s;
    let out = s;
    for (const g of guardrails) {
      for (const check of g.checks) {
        const spans = spansOf(check, out);
        if (spans !== null && spans.length > 0) out = redactSpans(out, spans);
      }
    }
    return out;
  };
  const walk = (v: unknown, key: string): unknown => {
    if (typeof v === 'string') return key === 'model' || key === 'role' || key === 'type' ? v : redact(v);
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (typeof v === 'object' && v !== null) {
      const out: Json = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, k);
      return out;
    }
    return v;
  };
  return JSON.stringify(walk(json, ''));
}

