// Tests translated from the projects this package mirrors, each naming its source; timing on a
// ManualClock wheel instead of their sleeps, our semantics where they differ (said per test).
import { ManualClock, TimingWheel, currentDeadline } from '@tickwheel/core';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { deadlinePlugin } from '../../src/fastify.js';
import { get, loopback, turns } from '../helpers/loopback.js';
import { timedServer } from '../helpers/timed-server.js';

const net = loopback();

describe('from nodejs/node test/parallel', () => {
  // test-http-server-headers-timeout-delayed-headers.js: a head that never completes gets 408 and the connection closes.
  it('headers timeout: delayed headers get 408 Request Timeout', async () => {
    const t = await timedServer(net, () => expect.fail('no request may reach the handler'), { headersMs: 2_000 });
    const client = await net.connect(t.port);
    client.write('GET / HTTP/1.1\r\n');
    await turns();
    t.clock.advance(1_000);
    client.write('Connection: close\r\n');
    await turns();
    t.clock.advance(1_000);
    expect(await client.whenClosed()).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  });

  // test-http-server-headers-timeout-keepalive.js: the first request completes within the limit, the
  // connection idles for 1.5x the limit (the head limit must not touch keep-alive), then a second head
  // that completes after the limit. Node answers that one with nothing but the close (e8d7fed); we
  // answer Node's 408 as for a first head, since the client had started sending.
  it('headers timeout with keep-alive: idle time does not count, a late second head is cut', async () => {
    const t = await timedServer(
      net,
      (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end();
      },
      { headersMs: 2_000 },
    );
    const client = await net.connect(t.port);
    client.write('GET / HTTP/1.1\r\nHost: x\r\n');
    t.clock.advance(400);
    client.write('Connection: keep-alive\r\n\r\n');
    await client.waitFor(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n$/);
    t.clock.advance(3_000);
    await turns();
    expect(client.closed).toBe(false);
    const before = client.received.length;
    client.write('GET / HTTP/1.1\r\nHost: x\r\n');
    await turns();
    t.clock.advance(2_000);
    await turns();
    t.clock.advance(2_000);
    const got = await client.whenClosed();
    expect(got.slice(before)).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  });

  // test-http-server-request-timeout-delayed-body.js: Node's requestTimeout cuts a body that arrives
  // late as a whole. bodyIdleMs only cuts silence while the handler reads: a body that keeps coming,
  // however slowly, is served (nodejs/node#46574).
  it('request timeout, delayed body: a slow body that keeps moving is served, a silent one gets 408', async () => {
    const t = await timedServer(
      net,
      (req, res) => {
        let body = '';
        req.setEncoding('utf-8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => res.end(body));
      },
      { bodyIdleMs: 1_000 },
    );
    const moving = await net.connect(t.port);
    moving.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nConnection: close\r\n\r\n');
    for (const part of ['12', '34', '56']) {
      await turns();
      t.clock.advance(750);
      moving.write(part);
    }
    expect(await moving.whenClosed()).toMatch(/\r\n\r\n123456$/);
    const silent = await net.connect(t.port);
    silent.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n12');
    for (let i = 0; i < 4; i++) {
      await turns();
      t.clock.advance(250);
    }
    expect(await silent.whenClosed()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  // test-http-server-keep-alive-timeout.js (the server closes an idle keep-alive socket after
  // keepAliveTimeout): with keepAliveMs, exactly at the limit.
  it('keep-alive timeout: an idle connection is closed at the limit', async () => {
    const t = await timedServer(net, (_req, res) => res.end('ok'), { keepAliveMs: 1_000 });
    const client = await net.connect(t.port);
    client.write(get('/'));
    await client.waitFor(/ok$/);
    t.clock.advance(999);
    await turns();
    expect(client.closed).toBe(false);
    t.clock.advance(1);
    await client.whenClosed();
  });
});

describe('from expressjs/timeout (connect-timeout) test/test.js', () => {
  // "when below the timeout should do nothing"
  it('below the timeout: does nothing', async () => {
    const t = await timedServer(net, (_req, res) => res.end('Hello'), { defaultTimeoutMs: 100 });
    const client = await net.connect(t.port);
    client.write(get('/'));
    await client.waitFor(/Hello$/);
    t.clock.advance(1_000);
    await turns();
    expect(t.events).toEqual([]);
  });

  // "when above the timeout with no response made should respond with 503 Request timeout"; its
  // `after` handler then calls res.end('Hello'), which connect-timeout users must guard with
  // req.timedout: here it is dropped.
  it('above the timeout with no response made: 503, the late res.end dropped', async () => {
    let after!: () => void;
    const t = await timedServer(net, (_req, res) => (after = () => res.end('Hello')), { defaultTimeoutMs: 100 });
    const client = await net.connect(t.port);
    client.write(get('/'));
    await turns();
    t.clock.advance(100);
    const got = await client.whenClosed();
    after();
    expect(got).toMatch(/^HTTP\/1\.1 503 /);
    expect(got).not.toContain('Hello');
  });

  // "with a partial response should do nothing": connect-timeout lets a started response run on
  // ('Hello World'). We cut it, so the client never takes 'Hello' for the whole response.
  it('above the timeout with a partial response: cut, never a short whole response', async () => {
    const t = await timedServer(
      net,
      (_req, res) => {
        res.write('Hello');
      },
      { defaultTimeoutMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(get('/'));
    await client.waitFor(/Hello/);
    t.clock.advance(100);
    const got = await client.whenClosed();
    expect(got).not.toMatch(/0\r\n\r\n$/);
  });

  // "req.timeoutLeft() should get the correct timeout left": currentDeadline().remaining().
  it('the time left: currentDeadline().remaining() counts down, 0 at the deadline', async () => {
    const left: number[] = [];
    let sample!: () => void;
    const t = await timedServer(
      net,
      () => {
        const deadline = currentDeadline()!;
        sample = () => left.push(deadline.remaining());
      },
      { defaultTimeoutMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(get('/'));
    await turns();
    t.clock.advance(50);
    sample();
    t.clock.advance(50);
    sample();
    expect(left).toEqual([50, 0]);
  });

  // "destroy() req / res / socket should clear timer", "when request aborted should clear timeout".
  it.each(['req', 'res', 'socket'] as const)('%s.destroy() ends the deadline: no timeout afterwards', async (which) => {
    const t = await timedServer(
      net,
      (req, res) => {
        if (which === 'req') req.destroy();
        else if (which === 'res') res.destroy();
        else req.socket.destroy();
      },
      { defaultTimeoutMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(get('/'));
    await client.whenClosed();
    t.clock.advance(1_000);
    expect(t.events).toEqual([]);
  });

  it('an aborted request ends the deadline: no timeout afterwards', async () => {
    let aborted = false;
    const t = await timedServer(net, (req) => req.on('aborted', () => (aborted = true)), { defaultTimeoutMs: 100 });
    const client = await net.connect(t.port);
    client.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0');
    await turns();
    client.socket.destroy();
    while (!aborted) await turns();
    t.clock.advance(1_000);
    expect(t.events).toEqual([]);
  });
});

describe('from fastify/fastify test/handler-timeout.test.js', () => {
  async function app(options: Record<string, unknown> = {}) {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const fastify = Fastify();
    await fastify.register(deadlinePlugin, { wheel, ...options });
    return { clock, fastify };
  }

  // "slow handler returns 503 with FST_ERR_HANDLER_TIMEOUT": ours answers 503 with code ETIMEDOUT.
  it('slow handler returns 503 with ETIMEDOUT', async () => {
    const { clock, fastify } = await app();
    fastify.get('/', { config: { deadline: { timeoutMs: 50 } } }, () => new Promise(() => {}));
    const pending = fastify.inject({ method: 'GET', url: '/' });
    await turns();
    clock.advance(50);
    const res = await pending;
    expect(res.statusCode).toBe(503);
    expect((JSON.parse(res.payload) as { code: string }).code).toBe('ETIMEDOUT');
  });

  // "fast handler completes normally with 200"
  it('fast handler completes normally with 200', async () => {
    const { fastify } = await app({ timeoutMs: 5_000 });
    fastify.get('/', () => ({ hello: 'world' }));
    const res = await fastify.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload)).toEqual({ hello: 'world' });
  });

  // "route-level handlerTimeout overrides server default"
  it('a route config.deadline overrides the plugin default', async () => {
    const { clock, fastify } = await app({ timeoutMs: 5_000 });
    fastify.get('/slow', { config: { deadline: { timeoutMs: 50 } } }, () => new Promise(() => {}));
    fastify.get('/fast', () => ({ ok: true }));
    const slow = fastify.inject({ method: 'GET', url: '/slow' });
    await turns();
    clock.advance(50);
    expect((await slow).statusCode).toBe(503);
    const fast = await fastify.inject({ method: 'GET', url: '/fast' });
    expect(fast.statusCode).toBe(200);
  });

  // "request.signal aborts when timeout fires with reason": currentDeadline().signal, a TimeoutError.
  it('the deadline signal aborts when the timeout fires, with its reason', async () => {
    const { clock, fastify } = await app({ timeoutMs: 50 });
    let reason: unknown;
    fastify.get('/', () => {
      const signal = currentDeadline()!.signal;
      signal.addEventListener('abort', () => (reason = signal.reason));
      return new Promise(() => {});
    });
    const pending = fastify.inject({ method: 'GET', url: '/' });
    await turns();
    clock.advance(50);
    await pending;
    expect((reason as DOMException).name).toBe('TimeoutError');
  });

  // "route-level errorHandler receives FST_ERR_HANDLER_TIMEOUT"
  it('a route-level errorHandler receives the timeout and answers it', async () => {
    const { clock, fastify } = await app();
    fastify.get(
      '/',
      {
        config: { deadline: { timeoutMs: 50 } },
        errorHandler: (error, _request, reply) => {
          expect((error as { code?: string }).code).toBe('ETIMEDOUT');
          void reply.code(504).send({ custom: 'timeout' });
        },
      },
      () => new Promise(() => {}),
    );
    const pending = fastify.inject({ method: 'GET', url: '/' });
    await turns();
    clock.advance(50);
    const res = await pending;
    expect(res.statusCode).toBe(504);
    expect(JSON.parse(res.payload)).toEqual({ custom: 'timeout' });
  });
});
