import Anthropic from '@anthropic-ai/sdk';
import { TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../../src/timeout-error.js';
import { withTimeouts } from '../../../src/with-timeouts.js';
import { rejectionOf } from '../../helpers/scripted-fetch.js';
import { sseEvent, sseHead, useStreamUpstream, type Exchange } from '../../helpers/stream-upstream.js';

/*
 * @anthropic-ai/sdk's messages stream through `fetch: withTimeouts(fetch, ...)`, against a local
 * upstream that speaks its wire format: named events (`message_start`, `content_block_delta`,
 * ..., `message_stop`) and `ping` events, which carry data and so would count as progress;
 * `isProgress` leaves them out. The model name scripts the upstream: `healthy` sends a delta
 * every 80 ms with pings between; `stall` sends two deltas, then only pings every 20 ms.
 */

function event(type: string, body: object): string {
  return sseEvent(JSON.stringify({ type, ...body }), type);
}

const START = event('message_start', {
  message: {
    id: 'msg_local',
    type: 'message',
    role: 'assistant',
    content: [],
    model: 'local',
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 },
  },
});

function messages({ res, body, every, after }: Exchange): void {
  const { model } = JSON.parse(body) as { model: string };
  sseHead(res);
  res.write(START);
  res.write(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
  const deltas = model === 'healthy' ? 6 : 2;
  let sent = 0;
  every(20, () => res.write(sseEvent('{"type": "ping"}', 'ping')));
  const next = (): void => {
    if (sent < deltas) {
      res.write(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `d${sent++} ` } }));
      after(model === 'healthy' ? 80 : 10, next);
    } else if (model === 'healthy') {
      res.write(event('content_block_stop', { index: 0 }));
      res.write(
        event('message_delta', {
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 6 },
        }),
      );
      res.end(event('message_stop', {}));
    }
  };
  next();
}

describe('the @anthropic-ai/sdk messages stream through withTimeouts(fetch)', () => {
  const { base, upstream } = useStreamUpstream({ '/v1/messages': messages });
  let wheel: TimingWheel;

  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  async function collect(model: string): Promise<string> {
    wheel = new TimingWheel();
    const client = new Anthropic({
      apiKey: 'sk-ant-local',
      baseURL: base(),
      maxRetries: 0,
      fetch: withTimeouts(fetch, { eventIdleMs: 250, isProgress: (e) => e.event !== 'ping', wheel }),
    });
    const stream = await client.messages.create({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    });
    let text = '';
    for await (const part of stream) {
      if (part.type === 'content_block_delta' && part.delta.type === 'text_delta') text += part.delta.text;
    }
    return text;
  }

  it('fails a stream that stalls behind ping events in eventIdleMs, and closes its connection', async () => {
    const abandoned = upstream().abandoned;
    const error = await rejectionOf(collect('stall'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'event-idle', timeoutMs: 250 });
    await expect.poll(() => upstream().abandoned).toBe(abandoned + 1);
  }, 10_000);

  it('lets a healthy slow stream with pings between its deltas finish', async () => {
    expect(await collect('healthy')).toBe('d0 d1 d2 d3 d4 d5 ');
  }, 10_000);
});
