// @tickwheel/http/koa against real koa 3: deadline(), ctx.throw through koa's error handling, late ctx.body dropped.
import http from 'node:http';
import { ManualClock, TimingWheel, currentDeadline } from '@tickwheel/core';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { deadline } from '../../src/koa.js';
import { arrivals, get, loopback, turns } from '../helpers/loopback.js';

const net = loopback();

function setup() {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  const app = new Koa();
  app.silent = true;
  const appErrors: unknown[] = [];
  app.on('error', (error) => appErrors.push(error));
  return { clock, wheel, app, appErrors };
}

/** A node:http server for the app (koa's callback returns a promise node:http does not read). */
function serve(app: Koa): http.Server {
  const handle = app.callback();
  return http.createServer((req, res) => void handle(req, res));
}

describe('deadline() on koa 3', () => {
  it('ends the chain with ctx.throw(503): koa answers it, and the handler’s late ctx.body is dropped', async () => {
    const { clock, wheel, app } = setup();
    let late!: () => void;
    const lateErrors: unknown[] = [];
    const caught: unknown[] = [];
    app.use(async (_ctx, next) => {
      try {
        await next();
      } catch (error) {
        caught.push(error);
        throw error;
      }
    });
    app.use(deadline({ timeoutMs: 1_000, wheel }));
    app.use(
      (ctx) =>
        new Promise<void>((resolve) => {
          late = () => {
            try {
              ctx.status = 200;
              ctx.body = { late: true };
            } catch (error) {
              lateErrors.push(error);
            }
            resolve();
          };
        }),
    );
    const server = serve(app);
    const arrived = arrivals(server);
    const port = await net.listen(server);
    const client = await net.connect(port);
    client.write(get('/slow'));
    await arrived();
    clock.advance(1_000);
    const got = await client.waitFor(/Response timeout$/);
    expect(got).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    late();
    await turns();
    expect(lateErrors).toEqual([]);
    expect(client.received.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(client.received).not.toContain('late');
    expect(caught).toHaveLength(1);
    expect(caught[0]).toMatchObject({ status: 503, expose: true, code: 'ETIMEDOUT', limitMs: 1_000 });
  });

  it('makes the deadline currentDeadline() downstream, and a later deadline() replaces it', async () => {
    const { wheel, app } = setup();
    app.use(deadline({ timeoutMs: 5_000, wheel }));
    app.use(async (ctx, next) => {
      if (ctx.path === '/long') return deadline({ timeoutMs: 600_000, wheel })(ctx, next);
      return next();
    });
    app.use(async (ctx) => {
      await Promise.resolve();
      ctx.body = { remaining: currentDeadline()?.remaining() };
    });
    const port = await net.listen(serve(app));
    const client = await net.connect(port);
    client.write(get('/app'));
    await client.waitFor(/\{"remaining":5000\}$/);
    const other = await net.connect(port);
    other.write(get('/long'));
    await other.waitFor(/\{"remaining":600000\}$/);
  });

  it('passes through without a deadline when none applies', async () => {
    const { wheel, app } = setup();
    app.use(deadline({ wheel }));
    app.use((ctx) => {
      ctx.body = currentDeadline() === undefined ? 'none' : 'some';
    });
    const port = await net.listen(serve(app));
    const client = await net.connect(port);
    client.write(get('/'));
    await client.waitFor(/none$/);
  });

  it('cuts a response that had started', async () => {
    const { clock, wheel, app } = setup();
    app.use(deadline({ timeoutMs: 100, wheel }));
    app.use((ctx) => {
      ctx.respond = false;
      ctx.res.writeHead(200);
      ctx.res.write('chunk');
      return new Promise(() => {});
    });
    const port = await net.listen(serve(app));
    const client = await net.connect(port);
    client.write(get('/'));
    await client.waitFor(/chunk/);
    clock.advance(100);
    expect((await client.whenClosed()).endsWith('0\r\n\r\n')).toBe(false);
  });
});
