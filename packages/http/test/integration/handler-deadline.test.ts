// serverTimeouts on node:http: the handler deadline, its 503, the handler's late writes, currentDeadline() and its signal.
import { once } from 'node:events';
import type http from 'node:http';
import { currentDeadline, withoutDeadline, type Deadline } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { get, loopback, turns } from '../helpers/loopback.js';
import { timedServer } from '../helpers/timed-server.js';

const net = loopback();

/** Every error the handler's late calls raised, synchronously or as an 'error' event. */
function lateCalls(res: http.ServerResponse, errors: unknown[], calls: Array<(r: http.ServerResponse) => void>): void {
  res.on('error', (error) => errors.push(error));
  for (const call of calls) {
    try {
      call(res);
    } catch (error) {
      errors.push(error);
    }
  }
}

describe('serverTimeouts on node:http: the handler deadline', () => {
  it('answers 503 with a short body when the deadline passes before the response started', async () => {
    const t = await timedServer(net, () => {}, { defaultTimeoutMs: 1_000 });
    const client = await net.connect(t.port);
    client.write(get('/slow'));
    await t.arrived();
    t.clock.advance(999);
    await turns();
    expect(client.received).toBe('');
    t.clock.advance(1);
    const got = await client.whenClosed();
    expect(got).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(got).toContain('Connection: close\r\n');
    const body = got.slice(got.indexOf('\r\n\r\n') + 4);
    expect(body).toBe("Service Unavailable: the request's deadline passed\n");
    expect(got).toContain(`Content-Length: ${body.length}\r\n`);
    expect(t.events).toEqual([
      { kind: 'handler', limitMs: 1_000, outcome: 'answered', req: expect.anything(), propagated: false },
    ]);
  });

  it('drops every later writeHead, setHeader, write and end of the handler: no error, no second response', async () => {
    const errors: unknown[] = [];
    let late!: () => void;
    const t = await timedServer(
      net,
      (_req, res) => {
        late = () =>
          lateCalls(res, errors, [
            (r) => r.setHeader('x-late', '1'),
            (r) => r.writeHead(200, { 'content-type': 'application/json' }),
            (r) => r.write('{"late":'),
            (r) => r.end('true}'),
            (r) => r.end(),
          ]);
      },
      { defaultTimeoutMs: 50, timeoutStatus: 504 },
    );
    const client = await net.connect(t.port);
    client.write(get('/late'));
    await t.arrived();
    t.clock.advance(50);
    const got = await client.whenClosed();
    late();
    await turns(10);
    expect(errors).toEqual([]);
    expect(got).toMatch(/^HTTP\/1\.1 504 Gateway Timeout\r\n/);
    expect(got.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(got).not.toContain('late');
  });

  it('drops late writes made while the answer is still on its way out, too', async () => {
    const errors: unknown[] = [];
    const t = await timedServer(
      net,
      (_req, res) => {
        currentDeadline()!.signal.addEventListener('abort', () =>
          lateCalls(res, errors, [(r) => r.writeHead(200), (r) => r.end('too late')]),
        );
      },
      { defaultTimeoutMs: 10 },
    );
    const client = await net.connect(t.port);
    client.write(get('/x'));
    await t.arrived();
    t.clock.advance(10);
    const got = await client.whenClosed();
    expect(errors).toEqual([]);
    expect(got).toMatch(/^HTTP\/1\.1 503 /);
    expect(got).not.toContain('too late');
  });

  it('cuts the connection when the response had started, so the client never sees a whole response', async () => {
    const t = await timedServer(
      net,
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      },
      { defaultTimeoutMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(get('/stream'));
    await client.waitFor(/partial/);
    t.clock.advance(100);
    const got = await client.whenClosed();
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(got).toContain('Transfer-Encoding: chunked');
    expect(got.endsWith('0\r\n\r\n')).toBe(false);
    expect(t.events.map((e) => [e.kind, e.outcome])).toEqual([['handler', 'cut']]);
  });

  it('does nothing to a response the handler had ended', async () => {
    const t = await timedServer(net, (_req, res) => res.end('done'), { defaultTimeoutMs: 100 });
    const client = await net.connect(t.port);
    client.write(get('/done'));
    await client.waitFor(/done$/);
    t.clock.advance(1_000);
    await turns();
    expect(client.closed).toBe(false);
    expect(t.events).toEqual([]);
  });

  it('makes the deadline currentDeadline() in the handler and in the async work it starts', async () => {
    const seen: Array<number | undefined> = [];
    let deadline: Deadline | undefined;
    const t = await timedServer(
      net,
      (_req, res) => {
        deadline = currentDeadline();
        seen.push(deadline?.remaining());
        void Promise.resolve().then(() => {
          seen.push(currentDeadline()?.remaining());
          setImmediate(() => {
            seen.push(currentDeadline() === deadline ? -1 : -2);
            seen.push(withoutDeadline(() => currentDeadline()?.remaining()));
            res.end('ok');
          });
        });
      },
      { defaultTimeoutMs: 2_500 },
    );
    const client = await net.connect(t.port);
    client.write(get('/'));
    await client.waitFor(/ok$/);
    expect(seen).toEqual([2_500, 2_500, -1, undefined]);
    expect(deadline!.wheel).toBe(t.wheel);
  });

  it('gives each request on a keep-alive connection its own deadline', async () => {
    const seen: Array<number | undefined> = [];
    const t = await timedServer(
      net,
      (req, res) => {
        seen.push(currentDeadline()?.remaining());
        res.end(req.url);
      },
      {
        timeoutFor: (req) => (req.url === '/none' ? 0 : req.url === '/long' ? 60_000 : undefined),
        defaultTimeoutMs: 700,
      },
    );
    const client = await net.connect(t.port);
    client.write(get('/long'));
    await client.waitFor(/\/long$/);
    t.clock.advance(10);
    client.write(get('/none'));
    await client.waitFor(/\/none$/);
    client.write(get('/default'));
    await client.waitFor(/\/default$/);
    expect(seen).toEqual([60_000, undefined, 700]);
  });

  it("aborts the handler's signal at the deadline, with a TimeoutError, after the 503 went out", async () => {
    let reason: unknown;
    const t = await timedServer(
      net,
      () => {
        const signal = currentDeadline()!.signal;
        signal.addEventListener('abort', () => (reason = signal.reason));
      },
      { defaultTimeoutMs: 30 },
    );
    const client = await net.connect(t.port);
    client.write(get('/'));
    await t.arrived();
    t.clock.advance(30);
    await client.whenClosed();
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('TimeoutError');
  });

  it("aborts the handler's signal when the client goes away, with an AbortError, and reports no timeout", async () => {
    let aborted: Promise<unknown> | undefined;
    const t = await timedServer(
      net,
      () => {
        const signal = currentDeadline()!.signal;
        aborted = once(signal, 'abort').then(() => signal.reason);
      },
      { defaultTimeoutMs: 10_000 },
    );
    const client = await net.connect(t.port);
    client.write(get('/'));
    await turns();
    client.socket.destroy();
    const reason = await aborted;
    expect((reason as DOMException).name).toBe('AbortError');
    expect(t.events).toEqual([]);
  });

  it('leaves requests alone when no deadline applies', async () => {
    const t = await timedServer(net, (_req, res) => {
      res.end(currentDeadline() === undefined ? 'undefined' : 'a deadline');
    });
    const client = await net.connect(t.port);
    client.write(get('/'));
    await client.waitFor(/undefined$/);
  });

  it('after stop(), gives new requests no deadline and cancels those in flight', async () => {
    const seen: Array<number | undefined> = [];
    const t = await timedServer(
      net,
      (req, res) => {
        seen.push(currentDeadline()?.remaining());
        if (req.url === '/first') setImmediate(() => res.end('first'));
        else res.end('second');
      },
      { defaultTimeoutMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(get('/first'));
    await t.arrived();
    t.timeouts.stop();
    t.clock.advance(1_000);
    await client.waitFor(/first$/);
    client.write(get('/second'));
    await client.waitFor(/second$/);
    expect(seen).toEqual([100, undefined]);
    expect(t.events).toEqual([]);
    t.timeouts.stop();
  });
});
