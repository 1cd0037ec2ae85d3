// The tickwheel:http:timeout channel: one message per limit that fired, built only for subscribers.
import { CORE_CAPTURE_CONTEXT_CHANNEL } from '@tickwheel/core';
import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { channelListener } from '../../../tests/helpers/channel-listener.js';
import { HTTP_TIMEOUT_CHANNEL } from '../src/index.js';
import { get, loopback, turns } from './helpers/loopback.js';
import { timedServer } from './helpers/timed-server.js';

const net = loopback();
const listen = channelListener();

describe('tickwheel:http:timeout', () => {
  it('publishes the handler deadline with the propagated flag and the context captured at its start', async () => {
    const messages = listen(HTTP_TIMEOUT_CHANNEL);
    const capture = (carrier: unknown) => ((carrier as { context: unknown }).context = 'the request context');
    diagnosticsChannel.subscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture);
    try {
      const t = await timedServer(net, () => {}, { defaultTimeoutMs: 1_000 });
      const client = await net.connect(t.port);
      client.write(get('/', { 'grpc-timeout': '250m' }));
      await t.arrived();
      t.clock.advance(250);
      await client.whenClosed();
    } finally {
      diagnosticsChannel.unsubscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture);
    }
    expect(messages).toEqual([
      {
        kind: 'handler',
        limitMs: 250,
        outcome: 'answered',
        req: expect.anything(),
        propagated: true,
        context: 'the request context',
      },
    ]);
  });

  it('publishes one message per kind: headers, body-idle, keep-alive', async () => {
    const messages = listen(HTTP_TIMEOUT_CHANNEL);
    const t = await timedServer(net, (req, res) => (req.url === '/read' ? req.resume() : res.end('ok')), {
      headersMs: 100,
      bodyIdleMs: 400,
      keepAliveMs: 1_000,
    });
    const head = await net.connect(t.port);
    head.write('GET / HTTP/1.1\r\n');
    const idle = await net.connect(t.port);
    idle.write(get('/'));
    await idle.waitFor(/ok$/);
    await turns();
    t.clock.advance(100);
    await head.whenClosed();
    const body = await net.connect(t.port);
    body.write('POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab');
    await turns();
    for (let i = 0; i < 4; i++) {
      t.clock.advance(100);
      await turns();
    }
    await body.whenClosed();
    t.clock.advance(1_000);
    await idle.whenClosed();
    expect(messages).toEqual([
      { kind: 'headers', limitMs: 100, outcome: 'answered', propagated: false, context: undefined },
      {
        kind: 'body-idle',
        limitMs: 400,
        outcome: 'answered',
        req: expect.anything(),
        propagated: false,
        context: undefined,
      },
      { kind: 'keep-alive', limitMs: 1_000, outcome: 'closed', propagated: false, context: undefined },
    ]);
  });
});
