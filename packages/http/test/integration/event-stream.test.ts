// eventStream on node:http and node:http2 against real clients: raw sockets, the eventsource package, a client
// that stops reading, a client that vanishes, and serverTimeouts on the same server.
import diagnosticsChannel from 'node:diagnostics_channel';
import http from 'node:http';
import http2 from 'node:http2';
import { ManualClock, TimingWheel, currentDeadline } from '@tickwheel/core';
import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it } from 'vitest';
import {
  eventStream,
  HTTP_EVENT_STREAM_END_CHANNEL,
  serverTimeouts,
  type EventStream,
  type EventStreamOptions,
  type HttpEventStreamEndMessage,
  type TimedResponse,
} from '../../src/index.js';
import { get, loopback, turns } from '../helpers/loopback.js';

const net = loopback();
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function manualWheel() {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  cleanups.push(() => wheel.close());
  return { clock, wheel };
}

/** A node:http server whose every request becomes an event stream; `streams` fills as they start. */
async function sseServer(
  options: EventStreamOptions,
  onStream: (stream: EventStream, res: TimedResponse) => void = () => {},
) {
  const streams: EventStream[] = [];
  const responses: TimedResponse[] = [];
  const server = http.createServer((req, res) => {
    const stream = eventStream(req, res, options);
    streams.push(stream);
    responses.push(res);
    onStream(stream, res);
  });
  const port = await net.listen(server);
  const nth = async (n: number): Promise<EventStream> => {
    while (streams.length <= n) await new Promise((resolve) => setImmediate(resolve));
    return streams[n];
  };
  return { server, port, streams, responses, nth };
}

describe('eventStream on node:http', () => {
  it('writes the head at once, then events, comments and heartbeats as EventSource reads them', async () => {
    const { clock, wheel } = manualWheel();
    const t = await sseServer({ wheel, heartbeatMs: 1000 });
    const client = await net.connect(t.port);
    client.write(get('/events'));
    await client.waitFor(/\r\n\r\n/);
    expect(client.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(client.received).toContain('content-type: text/event-stream\r\n');
    expect(client.received).toContain('cache-control: no-cache\r\n');
    expect(client.received).toContain('x-accel-buffering: no\r\n');
    const stream = await t.nth(0);
    expect(stream.send('one\ntwo', { event: 'pair', id: '1' })).toBe(true);
    stream.comment('note');
    await client.waitFor(/: note\n\n/);
    expect(client.received).toContain('id: 1\nevent: pair\ndata: one\ndata: two\n\n');
    clock.advance(1000);
    await client.waitFor(/:\n\n\r\n$/);
    expect(stream.lastEventId).toBe(undefined);
  });

  it('reads Last-Event-ID from the request', async () => {
    const { wheel } = manualWheel();
    const t = await sseServer({ wheel });
    const client = await net.connect(t.port);
    client.write(get('/events', { 'Last-Event-ID': '41' }));
    expect((await t.nth(0)).lastEventId).toBe('41');
  });

  it('ends at once when the client vanishes: no timer, listener or buffer of it is left', async () => {
    const { wheel } = manualWheel();
    const t = await sseServer({ wheel, heartbeatMs: 1000, maxStreamMs: 60_000, maxBufferedBytes: 1024 });
    const client = await net.connect(t.port);
    client.write(get('/events'));
    const stream = await t.nth(0);
    const res = t.responses[0] as http.ServerResponse;
    const socket = res.socket!;
    const closeListeners = res.listenerCount('close');
    stream.send('hello');
    await client.waitFor(/data: hello/);
    expect(wheel.size).toBe(1);
    const signal = stream.signal;
    client.socket.destroy();
    await expect(stream.ended).resolves.toEqual({ reason: 'client-gone' });
    expect(signal.aborted).toBe(true);
    expect(wheel.size).toBe(0);
    expect(res.listenerCount('close')).toBe(closeListeners - 1);
    expect(socket.destroyed).toBe(true);
    expect(res.writableLength).toBe(0);
    expect(stream.send('late')).toBe(false);
  });

  it('cuts a client that stops reading once it stays maxBufferedBytes behind for drainTimeoutMs, and frees its buffers', async () => {
    const { clock, wheel } = manualWheel();
    const t = await sseServer({ wheel, heartbeatMs: 0, maxBufferedBytes: 64 * 1024, drainTimeoutMs: 5000 });
    const client = await net.connect(t.port);
    client.write(get('/events'));
    const stream = await t.nth(0);
    await client.waitFor(/\r\n\r\n/);
    client.socket.pause();
    const res = t.responses[0] as http.ServerResponse;
    const socket = res.socket!;
    const chunk = 'x'.repeat(16 * 1024);
    // Fill the kernel's buffers on both ends, then ours: bounded, the loop ends once we are behind.
    for (let i = 0; i < 10_000 && res.writableLength <= 64 * 1024; i++) {
      stream.send(chunk);
      await turns(1);
    }
    expect(res.writableLength).toBeGreaterThan(64 * 1024);
    expect(stream.send(chunk)).toBe(false);
    clock.advance(4999);
    expect(socket.destroyed).toBe(false);
    clock.advance(1);
    await expect(stream.ended).resolves.toEqual({ reason: 'slow-consumer' });
    expect(socket.destroyed).toBe(true);
    expect(wheel.size).toBe(0);
    client.socket.resume();
    await client.whenClosed();
    await turns();
    expect(socket.writableLength).toBe(0);
    expect(res.writableLength).toBe(0);
  });

  it('throws a TypeError for a response that has ended', async () => {
    let thrown: unknown;
    const server = http.createServer((req, res) => {
      res.end('done');
      try {
        eventStream(req, res);
      } catch (error) {
        thrown = error;
      }
    });
    const port = await net.listen(server);
    const client = await net.connect(port);
    client.write(get('/'));
    await client.waitFor(/done$/);
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toBe('@tickwheel/http: eventStream() needs a response that has not ended');
  });

  it('reports each end on tickwheel:http:event-stream-end', async () => {
    const messages: HttpEventStreamEndMessage[] = [];
    const listener = (message: unknown): void => void messages.push(message as HttpEventStreamEndMessage);
    diagnosticsChannel.subscribe(HTTP_EVENT_STREAM_END_CHANNEL, listener);
    cleanups.push(() => diagnosticsChannel.unsubscribe(HTTP_EVENT_STREAM_END_CHANNEL, listener));
    const { clock, wheel } = manualWheel();
    const t = await sseServer({ wheel, maxStreamMs: 3000 });
    const client = await net.connect(t.port);
    client.write(get('/events'));
    const stream = await t.nth(0);
    clock.advance(3000);
    await stream.ended;
    expect(messages).toEqual([{ reason: 'max-age', ageMs: 3000 }]);
  });
});

describe('eventStream with the eventsource package', () => {
  it('delivers events, and the client reconnects after maxStreamMs with Last-Event-ID, after retry', async () => {
    const { clock, wheel } = manualWheel();
    let n = 0;
    const t = await sseServer({ wheel, heartbeatMs: 0, maxStreamMs: 10_000, retryMs: 20 }, (stream) => {
      const from = Number(stream.lastEventId ?? 0);
      n = from;
      for (let i = 0; i < 2; i++) {
        n++;
        stream.send(`event ${n}`, { id: String(n) });
      }
    });
    const es = new EventSource(`http://127.0.0.1:${t.port}/events`);
    cleanups.push(() => es.close());
    const got: Array<[string, string]> = [];
    es.onmessage = (event) => got.push([event.data as string, event.lastEventId]);
    while (got.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    clock.advance(10_000);
    await expect(t.streams[0].ended).resolves.toEqual({ reason: 'max-age' });
    const second = await t.nth(1);
    expect(second.lastEventId).toBe('2');
    while (got.length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(got).toEqual([
      ['event 1', '1'],
      ['event 2', '2'],
      ['event 3', '3'],
      ['event 4', '4'],
    ]);
  });
});

describe('eventStream with serverTimeouts on the same server', () => {
  it('takes the request out of the handler deadline, and close() ends every stream at once with retry (drain)', async () => {
    const { clock, wheel } = manualWheel();
    const deadlines: Array<number | undefined> = [];
    const streams: EventStream[] = [];
    const server = http.createServer((req, res) => {
      const stream = eventStream(req, res, { wheel, heartbeatMs: 0, retryMs: 500 });
      deadlines.push(currentDeadline()?.remaining());
      streams.push(stream);
    });
    const timeouts = serverTimeouts(server, { wheel, defaultTimeoutMs: 100 });
    const events: string[] = [];
    timeouts.on('timeout', (event) => events.push(event.kind));
    const port = await net.listen(server);
    const clients = await Promise.all([net.connect(port), net.connect(port)]);
    for (const client of clients) client.write(get('/events'));
    while (streams.length < 2) await turns(1);
    expect(deadlines).toEqual([undefined, undefined]);
    clock.advance(1000);
    await turns();
    expect(events).toEqual([]);
    streams[0].send('still here');
    await clients[0].waitFor(/still here/);
    const closing = timeouts.close({ graceMs: 60_000 });
    await expect(Promise.all(streams.map((s) => s.ended))).resolves.toEqual([{ reason: 'drain' }, { reason: 'drain' }]);
    for (const client of clients) expect(await client.whenClosed()).toMatch(/retry: 500\n\n\r\n0\r\n\r\n$/);
    await closing;
    expect(events).toEqual([]);
  });
});

describe('eventStream on node:http2', () => {
  it('streams events on the compatibility API and ends when the client resets the stream', async () => {
    const { wheel } = manualWheel();
    const streams: EventStream[] = [];
    const server = http2.createServer((req, res) => {
      const stream = eventStream(req, res, { wheel });
      stream.send('over h2', { id: '1' });
      streams.push(stream);
    });
    const port = await net.listen(server);
    const session = http2.connect(`http://127.0.0.1:${port}`);
    cleanups.push(() => session.destroy());
    const request = session.request({ ':path': '/events' });
    request.setEncoding('utf8');
    const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => request.once('response', resolve));
    expect(headers['content-type']).toBe('text/event-stream');
    let body = '';
    await new Promise<void>((resolve) =>
      request.on('data', (chunk: string) => {
        body += chunk;
        if (body.includes('\n\n')) resolve();
      }),
    );
    expect(body).toBe('id: 1\ndata: over h2\n\n');
    request.close(http2.constants.NGHTTP2_CANCEL);
    await expect(streams[0].ended).resolves.toEqual({ reason: 'client-gone' });
    expect(wheel.size).toBe(0);
  });
});
