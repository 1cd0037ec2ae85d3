import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { TimingWheel } from '@tickwheel/core';
import { streamText } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../../src/timeout-error.js';
import { withTimeouts } from '../../../src/with-timeouts.js';
import { sseHead, useStreamUpstream, type Exchange } from '../../helpers/stream-upstream.js';

/*
 * The Vercel AI SDK (`ai`'s streamText) with `@ai-sdk/openai-compatible`'s provider and
 * `fetch: withTimeouts(fetch, ...)`, against a local upstream that speaks the OpenAI chat
 * completions stream. The model name scripts it: `healthy` sends a token every 80 ms and ends;
 * `stall` sends three tokens, then only `: keep-alive` comments.
 */

function chunk(delta: object, finish: string | null = null): string {
  const body = {
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'local',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function completions({ res, body, every, after }: Exchange): void {
  const { model } = JSON.parse(body) as { model: string };
  sseHead(res);
  res.write(chunk({ role: 'assistant', content: '' }));
  const tokens = model === 'healthy' ? 6 : 3;
  let sent = 0;
  const next = (): void => {
    if (sent < tokens) {
      res.write(chunk({ content: `w${sent++} ` }));
      after(model === 'healthy' ? 80 : 10, next);
    } else if (model === 'healthy') {
      res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
    } else {
      every(20, () => res.write(': keep-alive\n\n'));
    }
  };
  next();
}

/** The TimeoutError in `error` or in its chain of causes. */
function timeoutIn(error: unknown): TimeoutError | undefined {
  for (let at = error, depth = 0; at !== undefined && depth < 5; depth++) {
    if (at instanceof TimeoutError) return at;
    at = (at as { cause?: unknown })?.cause;
  }
  return undefined;
}

// ai 7 and @ai-sdk/openai-compatible 3 declare engines node >= 22, yet run on Node 20 too (checked): the test runs on every Node CI uses.
describe('the Vercel AI SDK streams through withTimeouts(fetch)', () => {
  const { base, upstream } = useStreamUpstream({ '/v1/chat/completions': completions });
  let wheel: TimingWheel;

  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  async function run(model: string): Promise<{ text: string; errors: unknown[] }> {
    wheel = new TimingWheel();
    const provider = createOpenAICompatible({
      name: 'local',
      baseURL: `${base()}/v1`,
      apiKey: 'sk-local',
      fetch: withTimeouts(fetch, { bodyIdleMs: 100, firstEventMs: 1_000, eventIdleMs: 250, wheel }),
    });
    const errors: unknown[] = [];
    const result = streamText({
      model: provider.chatModel(model),
      prompt: 'Hello',
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    let text = '';
    try {
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') text += part.text;
      }
    } catch (error) {
      // streamText rethrows the stream's error to the reader of fullStream, after onError.
      errors.push(error);
    }
    return { text, errors };
  }

  it('fails a stream that stalls behind keep-alive comments in eventIdleMs, and closes its connection', async () => {
    const abandoned = upstream().abandoned;
    const { text, errors } = await run('stall');
    expect(text).toBe('w0 w1 w2 ');
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) expect(timeoutIn(error)).toMatchObject({ phase: 'event-idle', timeoutMs: 250 });
    await expect.poll(() => upstream().abandoned).toBe(abandoned + 1);
  }, 10_000);

  it('lets a healthy slow stream whose tokens keep coming finish', async () => {
    const { text, errors } = await run('healthy');
    expect(errors).toEqual([]);
    expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
  }, 10_000);
});
