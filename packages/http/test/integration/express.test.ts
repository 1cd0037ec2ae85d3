// @tickwheel/http/express against real express 5 and express 4: deadline() app-wide and per route, next(err), late res.json dropped.
import http from 'node:http';
import { ManualClock, TimingWheel, currentDeadline } from '@tickwheel/core';
import express5 from 'express';
import express4 from 'express4';
import { describe, expect, it } from 'vitest';
import { deadline } from '../../src/express.js';
import { serverTimeouts } from '../../src/index.js';
import { get, loopback, turns } from '../helpers/loopback.js';

const net = loopback();

describe.each([
  ['express 5', express5],
  ['express 4', express4],
])('deadline() on %s', (_name, express) => {
  function setup() {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const app = express();
    const errors: unknown[] = [];
    const lateErrors: unknown[] = [];
    return { clock, wheel, app, errors, lateErrors };
  }

  it('answers 503, keeps the timeout from the error handlers, and drops the handler’s late res.json without an error', async () => {
    const { clock, wheel, app, errors, lateErrors } = setup();
    let late!: () => void;
    app.use(deadline({ timeoutMs: 1_000, wheel }));
    app.get('/slow', (_req, res) => {
      late = () => {
        try {
          res.status(200).json({ late: true });
        } catch (error) {
          lateErrors.push(error);
        }
      };
    });
    app.use((err: unknown, _req: express5.Request, res: express5.Response, _next: express5.NextFunction) => {
      errors.push(err);
      res.status(500).send('from the error handler');
    });
    const port = await net.listen(http.createServer(app));
    const client = await net.connect(port);
    client.write(get('/slow'));
    await turns();
    clock.advance(1_000);
    const got = await client.whenClosed();
    late();
    await turns();
    expect(got).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(got).not.toContain('from the error handler');
    expect(got).not.toContain('late');
    expect(lateErrors).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('drops the late res.json of an async handler, with no rejection for express to see', async () => {
    const { clock, wheel, app, errors } = setup();
    let finished!: Promise<void>;
    app.get('/async', deadline({ timeoutMs: 10, wheel }), (_req, res) => {
      finished = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        res.json({ late: true });
      })();
    });
    app.use((err: unknown, _req: express5.Request, _res: express5.Response, next: express5.NextFunction) => {
      errors.push(err);
      next(err);
    });
    const port = await net.listen(http.createServer(app));
    const client = await net.connect(port);
    client.write(get('/async'));
    await turns();
    clock.advance(10);
    expect(await client.whenClosed()).toMatch(/^HTTP\/1\.1 503 /);
    await finished;
    expect(errors).toEqual([]);
  });

  it('passes the handler’s own errors to next(err) as usual', async () => {
    const { wheel, app, errors } = setup();
    app.get('/boom', deadline({ timeoutMs: 1_000, wheel }), () => {
      throw new Error('boom');
    });
    app.use((err: Error, _req: express5.Request, res: express5.Response, _next: express5.NextFunction) => {
      errors.push(err.message);
      res.status(500).send(`handled ${err.message}`);
    });
    const port = await net.listen(http.createServer(app));
    const client = await net.connect(port);
    client.write(get('/boom'));
    await client.waitFor(/handled boom$/);
    expect(errors).toEqual(['boom']);
  });

  it('lets a route replace the app-wide deadline, longer or shorter', async () => {
    const { wheel, app } = setup();
    app.use(deadline({ timeoutMs: 5_000, wheel }));
    const report = (_req: unknown, res: express5.Response) => {
      res.json({ remaining: currentDeadline()?.remaining() });
    };
    app.get('/report', deadline({ timeoutMs: 600_000, wheel }), report);
    app.get('/ping', deadline({ timeoutMs: 50, wheel }), report);
    app.get('/app', report);
    const port = await net.listen(http.createServer(app));
    for (const [path, remaining] of [
      ['/report', 600_000],
      ['/ping', 50],
      ['/app', 5_000],
    ] as const) {
      const client = await net.connect(port);
      client.write(get(path));
      expect(await client.waitFor(/\{"remaining":\d+\}$/)).toContain(`{"remaining":${remaining}}`);
    }
  });

  it("reads the caller's deadline header, which can only shorten the route's", async () => {
    const { wheel, app } = setup();
    app.get('/', deadline({ timeoutMs: 2_000, wheel }), (_req, res) => {
      res.json({ remaining: currentDeadline()?.remaining() });
    });
    const port = await net.listen(http.createServer(app));
    const client = await net.connect(port);
    client.write(get('/', { 'connect-timeout-ms': '120' }));
    await client.waitFor(/\{"remaining":120\}$/);
    client.write(get('/', { 'connect-timeout-ms': '120000' }));
    await client.waitFor(/\{"remaining":2000\}$/);
  });

  it('replaces the deadline serverTimeouts gave the request', async () => {
    const { clock, wheel, app, errors } = setup();
    app.get('/long', deadline({ timeoutMs: 60_000, wheel }), (_req, res) => {
      res.json({ remaining: currentDeadline()?.remaining() });
    });
    app.get('/slow', () => {});
    app.use((err: unknown, _req: express5.Request, _res: express5.Response, next: express5.NextFunction) => {
      errors.push(err);
      next(err);
    });
    const server = http.createServer(app);
    serverTimeouts(server, { defaultTimeoutMs: 100, wheel });
    const port = await net.listen(server);
    const client = await net.connect(port);
    client.write(get('/long'));
    await client.waitFor(/\{"remaining":60000\}$/);
    const other = await net.connect(port);
    other.write(get('/slow'));
    await turns();
    clock.advance(100);
    expect(await other.whenClosed()).toMatch(/^HTTP\/1\.1 503 /);
    expect(errors).toEqual([]);
  });

  it('cuts a response that had started', async () => {
    const { clock, wheel, app } = setup();
    app.get('/stream', deadline({ timeoutMs: 100, wheel }), (_req, res) => {
      res.write('chunk');
    });
    app.use((_err: unknown, _req: express5.Request, _res: express5.Response, _next: express5.NextFunction) => {});
    const port = await net.listen(http.createServer(app));
    const client = await net.connect(port);
    client.write(get('/stream'));
    await client.waitFor(/chunk/);
    clock.advance(100);
    expect((await client.whenClosed()).endsWith('0\r\n\r\n')).toBe(false);
  });
});
