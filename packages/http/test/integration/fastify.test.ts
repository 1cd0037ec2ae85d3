// @tickwheel/http/fastify against real fastify 5: the plugin, a route's config.deadline, the error handler, beside handlerTimeout.
import { ManualClock, TimingWheel, currentDeadline } from '@tickwheel/core';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { deadlinePlugin } from '../../src/fastify.js';
import { arrivals, get, loopback, turns } from '../helpers/loopback.js';

const net = loopback();

async function setup(options: Record<string, unknown> = {}) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  const app = Fastify(options);
  await app.register(deadlinePlugin, { timeoutMs: 1_000, wheel });
  return { clock, wheel, app };
}

async function start(app: ReturnType<typeof Fastify>): Promise<number> {
  await app.ready();
  return net.listen(app.server);
}

describe('deadlinePlugin on fastify 5', () => {
  it('answers through the error handler with timeoutStatus, and fastify itself refuses the late reply.send', async () => {
    const { clock, app } = await setup();
    const seen: unknown[] = [];
    let late!: () => void;
    app.setErrorHandler((error, _request, reply) => {
      seen.push(error);
      void reply.code(503).send({ error: 'timed out', code: (error as { code?: string }).code });
    });
    app.get('/slow', (_request, reply) => {
      late = () => void reply.send({ late: true });
    });
    const arrived = arrivals(app.server);
    const port = await start(app);
    const client = await net.connect(port);
    client.write(get('/slow'));
    await arrived();
    clock.advance(1_000);
    const got = await client.waitFor(/\}$/);
    expect(got).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(got).toContain('{"error":"timed out","code":"ETIMEDOUT"}');
    late();
    await turns();
    expect(client.received.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ statusCode: 503, code: 'ETIMEDOUT', limitMs: 1_000 });
  });

  it("answers with fastify's default error handler too", async () => {
    const { clock, app } = await setup();
    app.get('/slow', async () => new Promise(() => {}));
    const arrived = arrivals(app.server);
    const port = await start(app);
    const client = await net.connect(port);
    client.write(get('/slow'));
    await arrived();
    clock.advance(1_000);
    expect(await client.waitFor(/\}$/)).toMatch(/^HTTP\/1\.1 503 [^]*"code":"ETIMEDOUT"/);
  });

  it('gives a route its own deadline from config.deadline, and the handler sees it after the body was read', async () => {
    const { app } = await setup();
    const report = () => ({ remaining: currentDeadline()?.remaining() });
    app.post('/report', { config: { deadline: { timeoutMs: 600_000 } } }, report);
    app.get('/app', report);
    const port = await start(app);
    const client = await net.connect(port);
    client.write('POST /report HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{');
    await turns();
    client.write('}');
    await client.waitFor(/\{"remaining":600000\}$/);
    const other = await net.connect(port);
    other.write(get('/app'));
    await other.waitFor(/\{"remaining":1000\}$/);
  });

  it('refuses a bad config.deadline when the route is added', async () => {
    const { app } = await setup();
    expect(() => app.get('/bad', { config: { deadline: { timeoutMs: -1 } } }, () => 'x')).toThrow(
      '@tickwheel/http: config.deadline.timeoutMs must be',
    );
  });

  it("lives beside fastify's own handlerTimeout and request.signal: whichever fires first answers", async () => {
    const { clock, app } = await setup({ handlerTimeout: 50 });
    let ourSignal: AbortSignal | undefined;
    let theirSignal: AbortSignal | undefined;
    app.get('/slow', (request) => {
      ourSignal = currentDeadline()!.signal;
      theirSignal = request.signal;
      return new Promise(() => {});
    });
    const port = await start(app);
    const client = await net.connect(port);
    client.write(get('/slow'));
    const got = await client.waitFor(/\}$/);
    expect(got).toMatch(/^HTTP\/1\.1 503 /);
    expect(got).toContain('FST_ERR_HANDLER_TIMEOUT');
    expect(theirSignal!.aborted).toBe(true);
    // fastify's answer ended the request: our deadline ends with it, quietly.
    clock.advance(1_000);
    await turns();
    expect(ourSignal!.aborted).toBe(false);
    expect(client.received.match(/HTTP\/1\.1/g)).toHaveLength(1);
  });

  it('cuts a reply that had started streaming', async () => {
    const { clock, app } = await setup();
    app.get('/stream', (_request, reply) => {
      reply.raw.writeHead(200);
      reply.raw.write('chunk');
      reply.hijack();
    });
    const port = await start(app);
    const client = await net.connect(port);
    client.write(get('/stream'));
    await client.waitFor(/chunk/);
    clock.advance(1_000);
    expect((await client.whenClosed()).endsWith('0\r\n\r\n')).toBe(false);
  });
});
