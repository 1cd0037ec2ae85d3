// Tests translated from better-sse (MatthewWid/better-sse, src/Session.test.ts): those that apply to
// eventStream, each naming the better-sse test it comes from. better-sse's `Session(req, res)` is our
// `eventStream(req, res)`, its "disconnected" event our `ended`, its `keepAlive` our `heartbeatMs`.
import http from 'node:http';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it } from 'vitest';
import { eventStream, type EventStream, type EventStreamOptions } from '../../src/index.js';
import { loopback } from '../helpers/loopback.js';

const net = loopback();
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function setup(options: EventStreamOptions = {}, onRequest: (res: http.ServerResponse) => void = () => {}) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  cleanups.push(() => wheel.close());
  const streams: EventStream[] = [];
  const server = http.createServer((req, res) => {
    streams.push(eventStream(req, res, { wheel, ...options }));
    onRequest(res);
  });
  const url = `http://127.0.0.1:${await net.listen(server)}/`;
  const first = async (): Promise<EventStream> => {
    while (streams.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    return streams[0];
  };
  return { clock, wheel, url, first };
}

function open(url: string, init?: ConstructorParameters<typeof EventSource>[1]): EventSource {
  const es = new EventSource(url, init);
  cleanups.push(() => es.close());
  return es;
}

describe('better-sse Session.test.ts, translated', () => {
  describe('connection', () => {
    it('fires the disconnection event when the client kills the connection', async () => {
      const { url, first } = await setup();
      const es = open(url);
      es.addEventListener('open', () => es.close());
      await expect((await first()).ended).resolves.toEqual({ reason: 'client-gone' });
    });

    it('fires the disconnection event when the server closes the response stream', async () => {
      const { url, first } = await setup({}, (res) => res.end());
      open(url);
      await expect((await first()).ended).resolves.toEqual({ reason: 'closed' });
    });

    it('returns the correct response status code and headers by default', async () => {
      const { url } = await setup();
      const response = await new Promise<http.IncomingMessage>((resolve) => http.get(url, resolve));
      cleanups.push(() => response.destroy());
      expect(response.statusCode).toBe(200);
      expect(response.headers).toMatchObject({
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
    });
  });

  describe('keep-alive', () => {
    it('sends a comment in intervals to keep the connection alive', async () => {
      const { clock, url, first } = await setup({ heartbeatMs: 10_000 });
      const comments: string[] = [];
      const response = await new Promise<http.IncomingMessage>((resolve) => http.get(url, resolve));
      cleanups.push(() => response.destroy());
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => comments.push(chunk));
      await first();
      for (let i = 1; i <= 2; i++) {
        clock.advance(10_000);
        while (comments.length < i) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(comments).toEqual([':\n\n', ':\n\n']);
    });

    it('can set the keep-alive interval in options', async () => {
      const { clock, wheel, url, first } = await setup({ heartbeatMs: 30_000 });
      open(url);
      const stream = await first();
      const pending = wheel.size;
      clock.advance(15_000);
      expect(wheel.stats().fired).toBe(0);
      clock.advance(15_000);
      expect(wheel.stats().fired).toBe(1);
      expect(stream.signal.aborted).toBe(false);
      expect(pending).toBe(1);
    });

    it('can disable the keep-alive mechanism in options', async () => {
      const { clock, wheel, url, first } = await setup({ heartbeatMs: 0 });
      open(url);
      await first();
      clock.advance(60_000);
      expect(wheel.size).toBe(0);
      expect(wheel.stats().fired).toBe(0);
    });
  });

  describe('event id management', () => {
    it('starts with an empty last event ID', async () => {
      const { url, first } = await setup();
      open(url);
      expect((await first()).lastEventId).toBe(undefined);
    });

    it('trusts and stores the given last event ID by default', async () => {
      const { url, first } = await setup();
      open(url, {
        fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, 'Last-Event-ID': '12345678' } }),
      });
      expect((await first()).lastEventId).toBe('12345678');
    });
  });

  describe('push', () => {
    it('throws when pushing after the session has disconnected (here: send returns false and writes nothing)', async () => {
      const { url, first } = await setup({}, (res) => res.end());
      open(url);
      const stream = await first();
      await stream.ended;
      expect(stream.send('late')).toBe(false);
    });
  });
});
