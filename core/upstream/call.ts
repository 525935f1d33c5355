/**
 * The upstream call: one undici dispatch, its head deadline, and its cancellation when the client
 * goes away. What arrives is handed on as it comes to the response handling (answer.ts); nothing
 * is copied or buffered here. It is also the flow source the response sequencer pauses, resumes
 * and cancels.
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayContext } from '../context.js';
import type { Runtime } from '../runtime.js';
import type { FlowSource } from '../response/sequencer.js';
import type { BuiltCall } from './build.js';

/** What the call hands the answer to, in undici's order. */
export interface AnswerSink {
  start(status: number, headers: IncomingHttpHeaders): void;
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

/** Deadlines up to this long are timed precisely by the call; longer ones by undici. */
const PRECISE_TIMEOUT_LIMIT_MS = 30_000;

/** The call's own head deadline passed; `ETIMEDOUT` maps to 504 `upstream_timeout`. */
function deadlineError(ms: number): Error {
  return Object.assign(new Error(`no response head within ${ms} ms`), { code: 'ETIMEDOUT' });
}

export class UpstreamCall implements Dispatcher.DispatchHandler, FlowSource {
  #controller: Dispatcher.DispatchController | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #timedOut = false;
  #offAbort: (() => void) | undefined;
  #sink: AnswerSink | undefined;

  constructor(private readonly ctx: GatewayContext) {}

  /** Sends the call; what comes back goes to `sink`. */
  dispatch(rt: Runtime, built: BuiltCall, timeout: number, sink: AnswerSink): void {
    this.#sink = sink;
    const ctx = this.ctx;
    const url = built.url;
    ctx.timings.upstreamStart = performance.now();
    // undici's timers tick about every half second: fine for the default 10 minutes, too coarse for
    // a config's 200 ms. Short deadlines get a precise timer of their own.
    if (timeout <= PRECISE_TIMEOUT_LIMIT_MS) {
      this.#deadline = setTimeout(() => {
        this.#timedOut = true;
        this.#controller?.abort(deadlineError(timeout));
      }, timeout);
    }
    rt.agent.dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: ctx.method as Dispatcher.HttpMethod,
        headers: built.attempt.headers,
        body: built.attempt.body,
        headersTimeout: timeout <= PRECISE_TIMEOUT_LIMIT_MS ? timeout + 1000 : timeout,
        bodyTimeout: timeout,
      },
      this,
    );
  }

  /** The answer is settled: no deadline, no more cancellation on client abort. */
  done(): void {
    clearTimeout(this.#deadline);
    this.#offAbort?.();
  }

  pause(): void {
    this.#controller?.pause();
  }

  resume(): void {
    this.#controller?.resume();
  }

  abort(reason: Error): void {
    this.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#timedOut) return controller.abort(deadlineError(0));
    this.#offAbort = this.ctx.onAbort(() => controller.abort(this.ctx.abortReason!));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200) return; // 1xx informational: the real head follows
    clearTimeout(this.#deadline);
    const t = this.ctx.timings;
    t.upstreamHeaders = performance.now();
    t.upstreamMs += t.upstreamHeaders - t.upstreamStart;
    this.#sink!.start(status, headers);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#sink!.data(chunk);
  }

  /**
   * The answer's end is handled in the check phase of this loop turn rather than inside undici's
   * read of the upstream socket: under load the ends of every answer read in one turn are then
   * handled back to back (metering, the hooks, the client's write), as the bodies of the requests
   * read in one turn are (body-reader.ts). Measured on the shipped pipeline with `bench/ab.sh`,
   * 3–5 % less CPU a request; at one connection it costs one immediate.
   */
  onResponseEnd(): void {
    const sink = this.#sink!;
    setImmediate(() => sink.end());
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#sink!.error(err);
  }
}
