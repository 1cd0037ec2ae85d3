// eventStream from express, koa and fastify, and eventStreamBody from hono on @hono/node-server: the usage the README shows.
import http from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventStream, eventStreamBody, type EventStreamControls } from '../../src/index.js';
import { get, loopback, type RawClient } from '../helpers/loopback.js';

const net = loopback();
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function manualWheel() {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  cleanups.push(() => wheel.close());
  return { clock, wheel };
}

/** Waits until `streams` has one more than `n` entries. */
async function nth<T>(streams: T[], n: number): Promise<T> {
  while (streams.length <= n) await new Promise((resolve) => setImmediate(resolve));
  return streams[n];
}

/** What every framework must give: the head, an event, a heartbeat, Last-Event-ID, and 'client-gone' with nothing left. */
async function exercise(port: number, streams: EventStreamControls[], clock: ManualClock, wheel: TimingWheel) {
  const client: RawClient = await net.connect(port);
  client.write(get('/events', { 'Last-Event-ID': '9' }));
  await client.waitFor(/\r\n\r\n/);
  expect(client.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(client.received.toLowerCase()).toContain('content-type: text/event-stream\r\n');
  expect(client.received.toLowerCase()).toContain('cache-control: no-cache\r\n');
  expect(client.received.toLowerCase()).toContain('x-accel-buffering: no\r\n');
  const stream = await nth(streams, 0);
  expect(stream.lastEventId).toBe('9');
  stream.send('hi', { id: '10' });
  await client.waitFor(/id: 10\ndata: hi\n\n/);
  clock.advance(1000);
  await client.waitFor(/:\n\n/);
  client.socket.destroy();
  await expect(stream.ended).resolves.toEqual({ reason: 'client-gone' });
  expect(wheel.size).toBe(0);
}

describe('eventStream from frameworks', () => {
  it('express: eventStream(req, res)', async () => {
    const { clock, wheel } = manualWheel();
    const streams: EventStreamControls[] = [];
    const app = express();
    app.get('/events', (req, res) => {
      streams.push(eventStream(req, res, { wheel, heartbeatMs: 1000 }));
    });
    await exercise(await net.listen(http.createServer(app)), streams, clock, wheel);
  });

  it('koa: ctx.respond = false, then eventStream(ctx.req, ctx.res)', async () => {
    const { clock, wheel } = manualWheel();
    const streams: EventStreamControls[] = [];
    const app = new Koa();
    app.use((ctx) => {
      ctx.respond = false;
      streams.push(eventStream(ctx.req, ctx.res, { wheel, heartbeatMs: 1000 }));
    });
    const handle = app.callback();
    await exercise(await net.listen(http.createServer((req, res) => void handle(req, res))), streams, clock, wheel);
  });

  it('fastify: reply.hijack(), then eventStream(request.raw, reply.raw)', async () => {
    const { clock, wheel } = manualWheel();
    const streams: EventStreamControls[] = [];
    const app = Fastify();
    cleanups.push(() => app.close());
    app.get('/events', (request, reply) => {
      reply.hijack();
      streams.push(eventStream(request.raw, reply.raw, { wheel, heartbeatMs: 1000 }));
    });
    await app.ready();
    await exercise(await net.listen(app.server), streams, clock, wheel);
  });
});

describe('eventStreamBody on hono', () => {
  function honoServer(onStream: (stream: EventStreamControls) => void, options: Parameters<typeof eventStreamBody>[0]) {
    const app = new Hono();
    app.get('/events', (c) => {
      const stream = eventStreamBody(options, c.req.raw);
      onStream(stream);
      return new Response(stream.body, { headers: stream.headers });
    });
    return createAdaptorServer({ fetch: app.fetch }) as http.Server;
  }

  it('answers with the body and its headers; the client going away cancels the body (client-gone)', async () => {
    const { clock, wheel } = manualWheel();
    const streams: EventStreamControls[] = [];
    const server = honoServer((stream) => streams.push(stream), { wheel, heartbeatMs: 1000 });
    await exercise(await net.listen(server), streams, clock, wheel);
  });

  it('ends after maxStreamMs with retry, and the response ends', async () => {
    const { clock, wheel } = manualWheel();
    const streams: EventStreamControls[] = [];
    const server = honoServer((stream) => streams.push(stream), {
      wheel,
      heartbeatMs: 0,
      maxStreamMs: 5000,
      retryMs: 250,
    });
    const client = await net.connect(await net.listen(server));
    client.write(get('/events'));
    const stream = await nth(streams, 0);
    stream.send('a');
    await client.waitFor(/data: a\n\n/);
    clock.advance(5000);
    await expect(stream.ended).resolves.toEqual({ reason: 'max-age' });
    await client.waitFor(/retry: 250\n\n\r\n0\r\n\r\n$/);
  });

  it('cuts a client that stops reading (slow-consumer)', async () => {
    const { clock, wheel } = manualWheel();
    const streams: EventStreamControls[] = [];
    const server = honoServer((stream) => streams.push(stream), {
      wheel,
      heartbeatMs: 0,
      maxBufferedBytes: 32 * 1024,
      drainTimeoutMs: 1000,
    });
    const client = await net.connect(await net.listen(server));
    client.write(get('/events'));
    const stream = await nth(streams, 0);
    await client.waitFor(/\r\n\r\n/);
    client.socket.pause();
    const chunk = 'y'.repeat(16 * 1024);
    let behind = false;
    for (let i = 0; i < 10_000 && !behind; i++) {
      behind = !stream.send(chunk) && i > 4;
      await new Promise((resolve) => setImmediate(resolve));
    }
    // A few more so the body's own queue is past maxBufferedBytes whatever the framework holds.
    for (let i = 0; i < 4; i++) stream.send(chunk);
    // @hono/node-server logs the error a body fails with, then destroys the response.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    cleanups.push(() => logged.mockRestore());
    clock.advance(1000);
    await expect(stream.ended).resolves.toEqual({ reason: 'slow-consumer' });
    client.socket.resume();
    await client.whenClosed();
    expect(wheel.size).toBe(0);
    expect(logged).toHaveBeenCalledOnce();
    expect(logged.mock.calls[0][0]).toMatchObject({
      name: 'AbortError',
      message: 'The event stream cut a slow consumer',
    });
  });
});
