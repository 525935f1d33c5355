/**
 * The token counter: exact counts against gpt-tokenizer's own encoders, the cookbook's chat
 * formula, special tokens as plain text, every route's input shape, the model → encoding table,
 * the bounded queue (503 `overloaded` at once), abort of a waiting count, event-loop
 * responsiveness while 100 KB prompts are counted on the pool, the lazy pool, and close.
 */
import t from 'tap';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { encode as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { encode as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { createTokenCounter } from '../core/workers/token-counter.js';
import { encodingForModel } from '../core/workers/encodings.js';
import { isGatewayError } from '../core/errors.js';

const PLAIN = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
const n200 = (text: string): number => o200k(text, PLAIN).length;
const n100 = (text: string): number => cl100k(text, PLAIN).length;

/** Deterministic, varied prose (so the BPE merge cache does not make counting trivially cheap). */
function prose(chars: number, seed: number): string {
  const words = ['gateway', 'token', 'stream', 'latency', 'the', 'of', 'model', 'Zürich', '東京', 'naïve', '42', 'λ', 'fn()', '{"a":1}', 'réponse'];
  let x = seed * 2654435761 + 1;
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    x = (x * 1103515245 + 12345) >>> 0;
    const word = `${words[x % words.length]!}${x % 7 === 0 ? `${x % 997}` : ''}${x % 11 === 0 ? '.\n' : ' '}`;
    out.push(word);
    length += word.length;
  }
  return out.join('').slice(0, chars);
}

function codeOf(err: unknown): string | undefined {
  return isGatewayError(err) ? err.code : undefined;
}

t.test('known counts: "hello world" is 2 tokens in o200k and in cl100k', async (t) => {
  t.same(o200k('hello world', PLAIN), [24912, 2375]);
  t.same(cl100k('hello world', PLAIN), [15339, 1917]);
  const tokens = createTokenCounter();
  t.teardown(() => tokens.close());
  t.equal(await tokens.countText('hello world', 'gpt-4o'), 2);
  t.equal(await tokens.countText('hello world', 'gpt-4'), 2);
  t.equal(await tokens.countText('', 'gpt-4o'), 0);
  t.equal(tokens.stats.poolStarted, false, 'short texts never start the pool');
});

t.test('model family picks the encoding; unknown models estimate with o200k', async (t) => {
  const table: Array<[string, string]> = [
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini-2024-07-18', 'o200k_base'],
    ['chatgpt-4o-latest', 'o200k_base'],
    ['gpt-4.1-nano', 'o200k_base'],
    ['gpt-4.5-preview', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['gpt-5.1-codex', 'o200k_base'],
    ['o1', 'o200k_base'],
    ['o1-mini', 'o200k_base'],
    ['o3-pro', 'o200k_base'],
    ['o4-mini', 'o200k_base'],
    ['ft:gpt-4o-mini:acme::abc123', 'o200k_base'],
    ['openai/gpt-4o', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-4-turbo', 'cl100k_base'],
    ['gpt-4-0613', 'cl100k_base'],
    ['GPT-4-32k', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['ft:gpt-3.5-turbo:acme::x', 'cl100k_base'],
    ['text-embedding-3-small', 'cl100k_base'],
    ['text-embedding-3-large', 'cl100k_base'],
    ['text-embedding-ada-002', 'cl100k_base'],
    ['claude-sonnet-4-5', 'o200k_base'],
    ['gemini-2.5-pro', 'o200k_base'],
    ['llama-3.1-70b', 'o200k_base'],
    ['o1x', 'o200k_base'], // unknown, estimated: still o200k
    ['', 'o200k_base'],
  ];
  for (const [model, encoding] of table) t.equal(encodingForModel(model), encoding, model);

  // A text the two encodings count differently proves the counter uses the chosen one.
  const text = 'こんにちは世界、東京の天気は晴れです。 Zürich naïve réponse';
  t.not(n200(text), n100(text), 'precondition: the encodings disagree on this text');
  const tokens = createTokenCounter();
  t.teardown(() => tokens.close());
  t.equal(await tokens.countText(text, 'gpt-4o'), n200(text));
  t.equal(await tokens.countText(text, 'o3-mini'), n200(text));
  t.equal(await tokens.countText(text, 'gpt-4-turbo'), n100(text));
  t.equal(await tokens.countText(text, 'gpt-3.5-turbo'), n100(text));
  t.equal(await tokens.countText(text, 'claude-3-5-sonnet'), n200(text));
  t.equal(await tokens.countPrompt('embeddings', { model: 'text-embedding-3-small', input: text }), n100(text));
  t.equal(await tokens.countPrompt('chat.completions', { messages: [{ role: 'user', content: text }] }), 3 + n200('user') + n200(text) + 3, 'no model: o200k');
});

t.test('a chat prompt counts as the OpenAI cookbook formula', async (t) => {
  const messages = [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
    { role: 'assistant', content: 'Things working well together will increase revenue.' },
    { role: 'user', content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
  ];
  // num_tokens_from_messages: 3 per message + every value's tokens + 1 per name + 3 for priming.
  for (const [model, n] of [['gpt-4o', n200], ['gpt-4', n100]] as const) {
    let expected = 3;
    for (const m of messages) {
      expected += 3;
      for (const [key, value] of Object.entries(m)) {
        expected += n(value);
        if (key === 'name') expected += 1;
      }
    }
    const tokens = createTokenCounter();
    t.teardown(() => tokens.close());
    t.equal(await tokens.countPrompt('chat.completions', { model, messages }), expected, model);
  }
});

t.test('special tokens in user text count as plain text, inline and on the pool', async (t) => {
  const text = 'a <|endoftext|> b <|im_start|>system<|im_end|> <|endofprompt|>';
  const tokens = createTokenCounter({ threads: 1 });
  t.teardown(() => tokens.close());
  t.equal(await tokens.countText(text, 'gpt-4o'), n200(text));
  t.equal(await tokens.countText(text, 'gpt-4'), n100(text));
  t.ok(n200('<|endoftext|>') > 1, 'spelled out, not one special token');
  t.equal(await tokens.countPrompt('chat.completions', { model: 'gpt-4o', messages: [{ role: 'user', content: text }] }), 3 + n200('user') + n200(text) + 3);
  const big = `${prose(5000, 1)}<|endoftext|>${prose(5000, 2)}`;
  t.equal(await tokens.countText(big, 'gpt-4o'), n200(big), 'worker path');
  t.equal(tokens.stats.poolStarted, true);
});

t.test('every route shape', async (t) => {
  const tokens = createTokenCounter();
  t.teardown(() => tokens.close());
  const model = 'gpt-4o-mini';
  const count = (route: Parameters<typeof tokens.countPrompt>[0], body: Record<string, unknown>): Promise<number> =>
    tokens.countPrompt(route, { model, ...body });

  t.test('chat.completions: array content, tool calls, function calls, refusals', async (t) => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'text', text: 'this image' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"q":"x"}' } },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] },
    ];
    const expected =
      5 * 3 + 3 +
      n200('user') + n200('Describe') + n200('this image') +
      n200('assistant') + n200('get_weather') + n200('{"city":"Paris"}') +
      n200('tool') + n200('{"temp":21}') +
      n200('assistant') + n200('lookup') + n200('{"q":"x"}') +
      n200('assistant') + n200('I cannot.');
    t.equal(await count('chat.completions', { messages }), expected);
  });

  t.test('completions: string, strings, token array, token arrays', async (t) => {
    t.equal(await count('completions', { prompt: 'Say this is a test' }), n200('Say this is a test'));
    t.equal(await count('completions', { prompt: ['one two', 'three'] }), n200('one two') + n200('three'));
    t.equal(await count('completions', { prompt: [1, 2, 3, 4] }), 4);
    t.equal(await count('completions', { prompt: [[1, 2], [3, 4, 5]] }), 5);
  });

  t.test('embeddings and moderations: string, strings, tokens, multimodal parts', async (t) => {
    t.equal(await count('embeddings', { input: 'The food was delicious' }), n200('The food was delicious'));
    t.equal(await count('embeddings', { input: ['a b', 'c d e'] }), n200('a b') + n200('c d e'));
    t.equal(await count('embeddings', { input: [[10, 20, 30]] }), 3);
    t.equal(await count('moderations', { input: 'I want to kill them.' }), n200('I want to kill them.'));
    t.equal(await count('moderations', { input: ['x y', 'z'] }), n200('x y') + n200('z'));
    t.equal(
      await count('moderations', { input: [{ type: 'text', text: 'is this ok?' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }),
      n200('is this ok?'),
    );
  });

  t.test('responses: instructions plus string or item input', async (t) => {
    t.equal(await count('responses', { instructions: 'Be brief.', input: 'Tell me a joke' }), n200('Be brief.') + n200('Tell me a joke'));
    const input = [
      { role: 'user', content: 'plain string content' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'part one' }, { type: 'input_image', image_url: 'https://x/y.png' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'an answer' }] },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'c1', output: '{"temp":3}' },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thought' }] },
    ];
    const expected =
      n200('plain string content') + n200('part one') + n200('an answer') + n200('get_weather') + n200('{"city":"Oslo"}') + n200('{"temp":3}') + n200('thought');
    t.equal(await count('responses', { input }), expected);
  });

  t.test('unknown shapes count what they can and never throw', async (t) => {
    t.equal(await count('chat.completions', { messages: 'not an array' }), 3);
    t.equal(await count('chat.completions', { messages: [null, 42, { role: 7, content: { odd: true } }] }), 3 * 3 + 3);
    t.equal(await count('chat.completions', { messages: [{ role: 'user', content: [null, { type: 'mystery', text: 'found' }, 5] }] }), 3 + n200('user') + n200('found') + 3);
    t.equal(await count('completions', {}), 0);
    t.equal(await count('completions', { prompt: { nested: 'x' } }), 0);
    t.equal(await count('embeddings', { input: [null, true, 'ok'] }), n200('ok'));
    t.equal(await count('responses', { instructions: 5, input: [null, 3, 'bare string', { content: [{ text: 'x' }] }] }), n200('bare string') + n200('x'));
    t.equal(await tokens.countPrompt('responses', { model: 12, input: 'hi' }), n200('hi'), 'a non-string model is estimated');
  });
});

t.test('the queue is bounded: a full queue rejects with 503 overloaded at once, the rest resolve', async (t) => {
  const tokens = createTokenCounter({ maxQueue: 2, threads: 1 });
  t.teardown(() => tokens.close());
  const text = prose(50_000, 3);
  const expected = n200(text);
  // "At once" is measured in turns of the event loop, not milliseconds (the first count starts the
  // pool's thread synchronously, which takes tens of ms on a busy machine): a rejection settles in
  // the turn the counts were asked in, before any I/O, timer or thread's answer could run.
  let turnEnded = false;
  const settling = Promise.all(
    Array.from({ length: 50 }, () =>
      tokens.countText(text, 'gpt-4o').then(
        (n) => ({ ok: true as const, n, inTurn: !turnEnded }),
        (err: unknown) => ({ ok: false as const, err, inTurn: !turnEnded }),
      ),
    ),
  );
  setImmediate(() => (turnEnded = true));
  const settled = await settling;
  const resolved = settled.filter((s) => s.ok);
  const rejected = settled.filter((s) => !s.ok);
  t.equal(resolved.length, 3, 'one running and two waiting');
  t.equal(rejected.length, 47);
  for (const r of resolved) t.equal(r.n, expected);
  const first = rejected[0]!;
  t.equal(codeOf(first.err), 'overloaded');
  t.equal((first.err as { status?: number }).status, 503);
  t.match((first.err as Error).message, /token counter is busy/);
  t.ok(rejected.every((r) => codeOf(r.err) === 'overloaded'), 'every rejection is overloaded');
  t.ok(rejected.every((r) => r.inTurn), 'rejections are immediate (in the turn they were asked in), not queued behind the pool\'s start');
  t.ok(resolved.every((r) => !r.inTurn), 'the counts themselves take the pool\'s time');
  t.same(tokens.stats, { poolStarted: true, running: 0, queued: 0 });
});

t.test('an aborted signal cancels a waiting count; a running one stops being waited for', async (t) => {
  const tokens = createTokenCounter({ threads: 1 });
  t.teardown(() => tokens.close());
  const text = prose(20_000, 4);
  const running = new AbortController();
  const queued = new AbortController();
  const first = tokens.countText(text, 'gpt-4o', running.signal);
  const second = tokens.countText(text, 'gpt-4o', queued.signal);
  const third = tokens.countText(text, 'gpt-4o');
  t.same(tokens.stats, { poolStarted: true, running: 1, queued: 2 });
  queued.abort();
  await t.rejects(second, { name: 'AbortError' });
  t.equal(tokens.stats.queued, 1, 'the aborted count left the queue');
  running.abort(new Error('client went away'));
  await t.rejects(first, { message: 'client went away' });
  t.equal(await third, n200(text), 'the next count still runs on the same pool');
  const preAborted = AbortSignal.abort();
  await t.rejects(tokens.countText(text, 'gpt-4o', preAborted), { name: 'AbortError' });
});

t.test('the event loop stays responsive while 100 KB prompts are counted', async (t) => {
  const prompts = Array.from({ length: 20 }, (_, i) => ({
    model: 'gpt-4o',
    messages: [{ role: 'system', content: 'Summarise.' }, { role: 'user', content: prose(100_000, 100 + i) }],
  }));
  const expected = prompts.map((p) => 3 * 2 + 3 + n200('system') + n200('Summarise.') + n200('user') + n200(p.messages[1]!.content));

  async function measure(tokens: ReturnType<typeof createTokenCounter>): Promise<{ maxMs: number; wallMs: number }> {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    // The histogram skips its first tick (no previous timestamp): let it tick before the work.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const start = performance.now();
    const counts = await Promise.all(prompts.map((p) => tokens.countPrompt('chat.completions', p)));
    const wallMs = performance.now() - start;
    // One more turn of the loop, so a stall that ends right here is sampled too.
    await new Promise((resolve) => setTimeout(resolve, 5));
    histogram.disable();
    t.same(counts, expected, 'exact counts');
    return { maxMs: histogram.max / 1e6, wallMs };
  }

  const pooled = createTokenCounter();
  t.teardown(() => pooled.close());
  // Start the pool, and let both threads load their ranks and warm up, before measuring.
  await Promise.all([1, 2, 3, 4].map((i) => pooled.countText(prose(10_000, i), 'gpt-4o')));
  const pool = await measure(pooled);

  const inline = createTokenCounter({ inlineBelowChars: Infinity });
  t.teardown(() => inline.close());
  await inline.countText('warm up', 'gpt-4o');
  const onMain = await measure(inline);

  t.comment(`20 × 100 KB through the pool: max event-loop delay ${pool.maxMs.toFixed(1)} ms, wall ${pool.wallMs.toFixed(0)} ms`);
  t.comment(`the same counted inline: max event-loop delay ${onMain.maxMs.toFixed(1)} ms, wall ${onMain.wallMs.toFixed(0)} ms`);
  t.ok(pool.maxMs < 50, `max delay ${pool.maxMs.toFixed(1)} ms stays under 50 ms`);
  // The instrument can see a stall: the same work on the main thread blocks for its whole duration.
  t.ok(onMain.maxMs > 50, `inline counting stalls the loop (${onMain.maxMs.toFixed(1)} ms)`);
  t.equal(inline.stats.poolStarted, false);
});

t.test('the pool starts lazily and close() ends it', async (t) => {
  const tokens = createTokenCounter({ inlineBelowChars: 2000 });
  t.equal(tokens.stats.poolStarted, false, 'creating a counter starts nothing');
  const short = prose(1999, 6);
  t.equal(await tokens.countText(short, 'gpt-4o'), n200(short));
  t.equal(await tokens.countPrompt('chat.completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }), 3 + n200('user') + n200('hi') + 3);
  t.equal(tokens.stats.poolStarted, false, 'short counts run inline');
  const long = prose(2000, 7);
  t.equal(await tokens.countText(long, 'gpt-4o'), n200(long));
  t.equal(tokens.stats.poolStarted, true, 'the first large count starts it');

  await tokens.close();
  t.equal(tokens.stats.poolStarted, false, 'closed');
  await tokens.close(); // idempotent
  await t.rejects(tokens.countText(long, 'gpt-4o'), { code: 'server_draining' });
  t.equal(await tokens.countText('hello world', 'gpt-4o'), 2, 'inline counting needs no pool');
});

t.test('close() rejects waiting counts and never leaves threads behind', async (t) => {
  const tokens = createTokenCounter({ threads: 1 });
  const text = prose(20_000, 8);
  const running = tokens.countText(text, 'gpt-4o');
  const waiting = t.rejects(tokens.countText(text, 'gpt-4o'), { code: 'server_draining' });
  running.catch(() => undefined); // destroyed mid-count: rejected, which is fine here
  await tokens.close();
  await waiting;
  t.same(tokens.stats, { poolStarted: false, running: 0, queued: 0 });
});
