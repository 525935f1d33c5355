/**
 * The EventStream API on the response sequencer, through the official OpenAI SDK: a plugin sees,
 * holds back, rewrites and releases SSE events, pauses the stream for an async check, ends the
 * stream with an error event mid-way, and nothing is buffered when nobody holds.
 */
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { definePlugin, type EventStream, type PluginDefinition } from '../core/index.js';
import { defineError } from '../core/errors.js';
import type { Outcome } from '../core/context.js';
import type { SseEvent } from '../core/sse/sse-parser.js';
import { startGateway, startMock, sdk, type Teardown } from './helpers/gateway.js';

const Blocked = defineError(400, 'invalid_request_error', 'content_blocked', 'The answer was stopped by a guardrail.');

interface Chunk {
  choices: Array<{ delta: { content?: string; role?: string } }>;
}

/** The content delta of an OpenAI chunk event ('' for the role event, undefined for [DONE]). */
function contentOf(event: SseEvent): string | undefined {
  if (event.data === '[DONE]' || event.data.length === 0) return undefined;
  return (JSON.parse(event.data) as Chunk).choices[0]?.delta.content ?? '';
}

function upper(event: SseEvent): SseEvent {
  if (contentOf(event) === undefined) return event;
  const chunk = JSON.parse(event.data) as Chunk;
  const delta = chunk.choices[0]!.delta;
  if (delta.content) delta.content = delta.content.toUpperCase();
  return { ...event, data: JSON.stringify(chunk) };
}

/** Reads a stream through the SDK: the content pieces in order, and the error it ended with, if any. */
async function readAll(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<{ pieces: string[]; error: unknown }> {
  const pieces: string[] = [];
  try {
    for await (const chunk of stream) {
      const c = chunk.choices[0]?.delta.content;
      if (c) pieces.push(c);
    }
  } catch (error) {
    return { pieces, error };
  }
  return { pieces, error: undefined };
}

t.test('a plugin holds every event until it has seen 3, then releases them rewritten, in order', async (t) => {
  const mock = await startMock(t);
  /** Per stream: how many events the holding plugin had seen when a later-in-flow plugin saw each one. */
  const seenAt: number[] = [];
  let seen = 0;
  const gw = await startGateway(t, {
    // `observer` is first in YAML, so it sees what `batcher` passes on (response hooks run in reverse).
    yaml: 'pipeline: [observer, batcher]\n',
    plugins: {
      observer: definePlugin({
        name: 'observer',
        setup: () => ({
          onResponseChunk() {
            seenAt.push(seen);
          },
        }),
      }) as PluginDefinition<never>,
      batcher: definePlugin({
        name: 'batcher',
        setup: () => ({
          onResponseChunk(_ctx, event, stream) {
            seen++;
            stream.hold(event);
            if (stream.held.length >= 3) stream.release(stream.held.map(upper));
          },
          onResponseStreamEnd(_ctx, stream) {
            stream.release(stream.held.map(upper));
          },
        }),
      }) as PluginDefinition<never>,
    },
  });
  // 7 content pieces: role + 7 + finish + [DONE] = 10 events, so the last one is released at the end.
  const stream = await sdk(gw, mock, 'chunks=7').chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hold these words back' }] });
  const { pieces, error } = await readAll(stream);
  t.equal(error, undefined, 'the stream ended normally');
  t.equal(pieces.join(''), 'MOCK REPLY TO: HOLD THESE WORDS BACK', 'every event, rewritten, in order');
  t.ok(pieces.length >= 5, `the pieces arrive as events (${pieces.length})`);
  t.same(seenAt, [3, 3, 3, 6, 6, 6, 9, 9, 9, 10], 'events were passed on only in threes, the rest at the end');
});

t.test('a plugin replaces the rest of the stream with an error event (a guardrail denial)', async (t) => {
  const mock = await startMock(t);
  const outcomes: Outcome[] = [];
  const ended: string[] = [];
  const gw = await startGateway(t, {
    yaml: 'pipeline: [watch, guard]\n',
    plugins: {
      watch: definePlugin({
        name: 'watch',
        setup: () => ({
          onResponseEnd(ctx) {
            ended.push(ctx.streamError?.code ?? 'none');
          },
          onDone(_ctx, outcome) {
            outcomes.push(outcome);
          },
        }),
      }) as PluginDefinition<never>,
      guard: definePlugin({
        name: 'guard',
        setup: () => {
          const text = new WeakMap<EventStream, string>();
          return {
            onResponseChunk(_ctx, event, stream) {
              const so = (text.get(stream) ?? '') + (contentOf(event) ?? '');
              text.set(stream, so);
              if (so.includes('secret')) return void stream.fail(Blocked('The answer mentions a secret.'));
            },
          };
        },
      }) as PluginDefinition<never>,
    },
  });
  const stream = await sdk(gw, mock, 'chunks=8').chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'tell me the secret plan now please' }] });
  const { pieces, error } = await readAll(stream);
  t.ok(error instanceof OpenAI.APIError, 'the SDK sees the error event');
  t.equal((error as InstanceType<typeof OpenAI.APIError>).code, 'content_blocked');
  const text = pieces.join('');
  t.ok(text.length > 0 && 'Mock reply to: tell me the secret plan now please'.startsWith(text), `the events before it came, in order: ${JSON.stringify(text)}`);
  t.notOk(text.includes('secret'), 'the offending event never went out');
  for (let i = 0; i < 100 && outcomes.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(outcomes[0]?.streamError?.code, 'content_blocked', 'the outcome is the denial');
  t.same(ended, ['content_blocked'], 'onResponseEnd ran once, after the denial');

  // The same stream with nothing to deny goes through whole.
  const clean = await sdk(gw, mock, 'chunks=8').chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'tell me the plan' }] });
  const again = await readAll(clean);
  t.equal(again.error, undefined);
  t.equal(again.pieces.join(''), 'Mock reply to: tell me the plan');
});

t.test('wait: an async check on held events pauses the flow, then releases or fails it', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [moderate]\n',
    plugins: {
      moderate: definePlugin({
        name: 'moderate',
        setup: () => ({
          onResponseChunk(_ctx, event, stream) {
            stream.hold(event);
            if (stream.held.length < 2) return;
            const batch = stream.held.slice();
            // A stand-in for a moderation call: decides on the held text a little later.
            const verdict = new Promise<boolean>((resolve) => setTimeout(() => resolve(!batch.some((e) => contentOf(e)?.includes('bad'))), 5));
            stream.wait(verdict.then((ok) => (ok ? stream.release(batch.map(upper)) : stream.fail(Blocked()))));
          },
        }),
      }) as PluginDefinition<never>,
    },
  });
  const good = await readAll(await sdk(gw, mock, 'chunks=9').chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'all fine words here' }] }));
  t.equal(good.error, undefined);
  t.equal(good.pieces.join(''), 'MOCK REPLY TO: ALL FINE WORDS HERE', 'released in order after each check');

  const bad = await readAll(await sdk(gw, mock, 'chunks=9').chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'some bad words here' }] }));
  t.equal((bad.error as InstanceType<typeof OpenAI.APIError>).code, 'content_blocked', 'a failed check ends the stream with the error event');
  t.notOk(bad.pieces.join('').includes('BAD'), 'the checked batch never went out');
});

/** An upstream that sends the first event, then waits for `gate` before the rest. */
async function gatedUpstream(t: Teardown, gate: Promise<void>): Promise<{ url: string; finished: () => boolean }> {
  let finished = false;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (content: string): string => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
      res.write(chunk('first '));
      void gate.then(() => {
        finished = true;
        res.end(`${chunk('second')}data: [DONE]\n\n`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, finished: () => finished };
}

t.test('nothing is buffered when no plugin holds: the first event reaches the client before the upstream ended', async (t) => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const upstream = await gatedUpstream(t, gate);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [pass]\n',
    plugins: {
      pass: definePlugin({
        name: 'pass',
        setup: () => ({
          onResponseChunk(_ctx, event, stream) {
            // Holds only what it is told to; this stream never is.
            if (event.data.includes('hold-me')) return stream.hold(event);
          },
          onResponseStreamEnd() {},
        }),
      }) as PluginDefinition<never>,
    },
  });
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': upstream.url } });
  const stream = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const it = stream[Symbol.asyncIterator]();
  const first = await it.next();
  t.equal(first.done, false);
  t.equal((first.value as OpenAI.Chat.Completions.ChatCompletionChunk).choices[0]?.delta.content, 'first ', 'the first event arrived');
  t.equal(upstream.finished(), false, 'while the upstream had not ended its stream');
  open();
  const second = await it.next();
  t.equal((second.value as OpenAI.Chat.Completions.ChatCompletionChunk).choices[0]?.delta.content, 'second');
  t.equal((await it.next()).done, true);
});
