// close({ graceMs }): stop accepting, close idle keep-alive connections, Connection: close in flight, end what is left at the grace.
import http from 'node:http';
import { currentDeadline } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { get, loopback, turns } from '../helpers/loopback.js';
import { timedServer } from '../helpers/timed-server.js';

const net = loopback();

describe('close({ graceMs })', () => {
  it('closes idle keep-alive connections at once, lets in-flight requests finish with Connection: close, resolves when closed', async () => {
    const finishers: Array<() => void> = [];
    const t = await timedServer(net, (req, res) => {
      if (req.url === '/slow') finishers.push(() => res.end('slow done'));
      else res.end('quick');
    });
    const idle = await net.connect(t.port);
    idle.write(get('/quick'));
    await idle.waitFor(/quick$/);
    const busy = await net.connect(t.port);
    busy.write(get('/slow'));
    await turns();
    let closed = false;
    const closing = t.timeouts.close({ graceMs: 10_000 }).then(() => (closed = true));
    await idle.whenClosed();
    expect(busy.closed).toBe(false);
    finishers[0]();
    const got = await busy.whenClosed();
    expect(got).toContain('Connection: close\r\n');
    expect(got).toMatch(/slow done$/);
    await closing;
    expect(closed).toBe(true);
    expect(t.events).toEqual([]);
  });

  it('ends what is still in flight when the grace ends: the answer before the response started, a cut after', async () => {
    const t = await timedServer(net, (req, res) => {
      if (req.url === '/started') {
        res.writeHead(200);
        res.write('begun');
      }
    });
    const waiting = await net.connect(t.port);
    waiting.write(get('/waiting'));
    const started = await net.connect(t.port);
    started.write(get('/started'));
    await started.waitFor(/begun/);
    const closing = t.timeouts.close({ graceMs: 5_000 });
    t.clock.advance(4_999);
    await turns();
    expect(waiting.closed || started.closed).toBe(false);
    t.clock.advance(1);
    const answer = await waiting.whenClosed();
    expect(answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(answer).toContain('Service Unavailable: the server is shutting down\n');
    expect((await started.whenClosed()).endsWith('0\r\n\r\n')).toBe(false);
    await closing;
    expect(t.events.map((e) => [e.kind, e.limitMs, e.outcome]).sort()).toEqual([
      ['drain', 5_000, 'answered'],
      ['drain', 5_000, 'cut'],
    ]);
  });

  it("aborts the in-flight handlers' signals when the grace ends", async () => {
    let reason: unknown;
    const t = await timedServer(
      net,
      () => {
        const signal = currentDeadline()!.signal;
        signal.addEventListener('abort', () => (reason = signal.reason));
      },
      { defaultTimeoutMs: 60_000 },
    );
    const client = await net.connect(t.port);
    client.write(get('/'));
    await t.arrived();
    const closing = t.timeouts.close({ graceMs: 100 });
    t.clock.advance(100);
    await closing;
    expect((reason as DOMException).name).toBe('TimeoutError');
  });

  it('resolves for a server that is not listening, and returns the same promise when called again', async () => {
    const server = http.createServer();
    const { serverTimeouts } = await import('../../src/index.js');
    const timeouts = serverTimeouts(server);
    const first = timeouts.close();
    expect(timeouts.close()).toBe(first);
    await first;
  });
});
