import { TimingWheel } from '@tickwheel/core';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../../src/timeout-error.js';
import { withTimeouts } from '../../../src/with-timeouts.js';
import { rejectionOf } from '../../helpers/scripted-fetch.js';
import { sseHead, useStreamUpstream, type Exchange } from '../../helpers/stream-upstream.js';

/*
 * The openai SDK's chat completions stream through `fetch: withTimeouts(fetch, ...)`, against a
 * local upstream that speaks its wire format (`data: <chunk JSON>` events, `data: [DONE]`). The
 * model name scripts the upstream: `healthy` sends a token every 80 ms and ends; `stall` sends
 * three tokens, then only `: keep-alive` comments, as a stuck upstream behind a proxy does.
 */

function chunk(content: string, finish: string | null = null): string {
  const body = {
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'local',
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function completions({ res, body, every, after }: Exchange): void {
  const { model } = JSON.parse(body) as { model: string };
  sseHead(res);
  const tokens = model === 'healthy' ? 8 : 3;
  let sent = 0;
  const next = (): void => {
    if (sent < tokens) {
      res.write(chunk(`t${sent++} `));
      after(model === 'healthy' ? 80 : 10, next);
    } else if (model === 'healthy') {
      res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
    } else {
      every(20, () => res.write(': keep-alive\n\n'));
    }
  };
  next();
}

// openai 7 declare engines node >= 22, yet run on Node 20 too (checked): the test runs on every Node CI uses.
describe('the openai SDK streams through withTimeouts(fetch)', () => {
  const { base, upstream } = useStreamUpstream({ '/v1/chat/completions': completions });
  let wheel: TimingWheel;

  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  function client(): OpenAI {
    wheel = new TimingWheel();
    return new OpenAI({
      apiKey: 'sk-local',
      baseURL: `${base()}/v1`,
      maxRetries: 0,
      fetch: withTimeouts(fetch, { headersMs: 2_000, bodyIdleMs: 100, firstEventMs: 1_000, eventIdleMs: 250, wheel }),
    });
  }

  async function collect(model: string): Promise<string> {
    const stream = await client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    return text;
  }

  it('fails a stream that stalls behind keep-alive comments in eventIdleMs, and closes its connection', async () => {
    const abandoned = upstream().abandoned;
    const started = performance.now();
    const error = await rejectionOf(collect('stall'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'event-idle', timeoutMs: 250, method: 'POST' });
    expect(performance.now() - started).toBeLessThan(3_000);
    await expect.poll(() => upstream().abandoned).toBe(abandoned + 1);
  }, 10_000);

  it('lets a healthy slow stream whose tokens keep coming finish', async () => {
    expect(await collect('healthy')).toBe('t0 t1 t2 t3 t4 t5 t6 t7 ');
  }, 10_000);
});
