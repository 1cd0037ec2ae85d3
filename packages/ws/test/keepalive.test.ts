import type { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { heartbeat } from '../src/heartbeat.js';
import { bytesWrittenOf, frameBytes, KeepaliveMark } from '../src/keepalive.js';
import type { HeartbeatOptions } from '../src/types.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';
import { useManualWheel } from './helpers/watch-one.js';

let clock: ManualClock;
let wheel: TimingWheel;
useManualWheel((c, w) => ([clock, wheel] = [c, w]));

/**
 * A fake socket whose transport counts what it writes, as a `net.Socket`'s `bytesWritten` does:
 * every frame sent or pinged, at its size on the wire (unmasked: the server's side).
 */
class CountingSocket extends FakeSocket {
  declare _socket: { bytesRead: number; bytesWritten: number };
  sends: Array<{ data: unknown; options: unknown }> = [];

  constructor() {
    super({ transport: true });
    this._socket.bytesWritten = 0;
  }

  override send(data: unknown, options?: unknown, cb?: (err?: Error) => void): void {
    this.sends.push({ data, options: typeof options === 'function' ? undefined : options });
    this._socket.bytesWritten += frameBytes(Buffer.byteLength(data as string), false);
    super.send(data, options, cb);
  }

  override ping(): void {
    super.ping();
    this._socket.bytesWritten += frameBytes(0, false);
  }

  /** The peer answers a ping. */
  pong(): void {
    this.emit('pong', Buffer.alloc(0));
  }

  /** How many keepalives (sends of `message`) went out. */
  keepalives(message = ''): number {
    return this.sends.filter((s) => s.data === message).length;
  }
}

function serve(options: HeartbeatOptions) {
  const server = new FakeServer();
  const beat = heartbeat(server as never, { pingIntervalMs: 0, wheel, ...options });
  const socket = new CountingSocket();
  server.connect(socket);
  return { beat, socket };
}

describe('frameBytes', () => {
  it('counts the header, the extended length and the mask of RFC 6455 §5.2', () => {
    expect(frameBytes(0, false)).toBe(2);
    expect(frameBytes(125, false)).toBe(127);
    expect(frameBytes(126, false)).toBe(130);
    expect(frameBytes(65_535, false)).toBe(65_539);
    expect(frameBytes(65_536, false)).toBe(65_546);
    expect(frameBytes(0, true)).toBe(6);
    expect(frameBytes(126, true)).toBe(134);
  });
});

describe('bytesWrittenOf', () => {
  it("reads the transport's counter, or -1 without one", () => {
    const socket = new CountingSocket();
    socket._socket.bytesWritten = 42;
    expect(bytesWrittenOf(socket.ws)).toBe(42);
    expect(bytesWrittenOf(new FakeSocket().ws)).toBe(-1);
  });
});

describe('KeepaliveMark', () => {
  it("takes bytes beyond its own frames for something sent, at the sample's time", () => {
    const socket = new CountingSocket();
    const mark = new KeepaliveMark(socket.ws, 0);
    socket.ping();
    mark.ownFrame(2);
    mark.noticeWrites(socket.ws, 10);
    expect(mark.lastSentAt).toBe(0);
    socket.send('hello');
    mark.noticeWrites(socket.ws, 20);
    expect(mark.lastSentAt).toBe(20);
  });

  it('keeps a frame of its own that was not written yet subtracted until it shows', () => {
    const socket = new CountingSocket();
    const mark = new KeepaliveMark(socket.ws, 0);
    mark.ownFrame(2); // queued in ws, behind a message being compressed
    mark.noticeWrites(socket.ws, 10);
    socket._socket.bytesWritten += 2; // now it is written
    mark.noticeWrites(socket.ws, 20);
    expect(mark.lastSentAt).toBe(0);
  });

  it('counts across the 2^24 wrap of its mark', () => {
    const socket = new CountingSocket();
    socket._socket.bytesWritten = 2 ** 24 - 1;
    const mark = new KeepaliveMark(socket.ws, 0);
    socket._socket.bytesWritten += 2;
    mark.ownFrame(2);
    mark.noticeWrites(socket.ws, 10);
    expect(mark.lastSentAt).toBe(0);
    socket._socket.bytesWritten += 7;
    mark.noticeWrites(socket.ws, 20);
    expect(mark.lastSentAt).toBe(20);
  });

  it('takes a socket without a counter for one that is never sent anything', () => {
    const socket = new FakeSocket();
    const mark = new KeepaliveMark(socket.ws, 5);
    socket.send('x');
    mark.noticeWrites(socket.ws, 10);
    expect(mark.lastSentAt).toBe(5);
  });
});

describe('heartbeat with keepaliveMs', () => {
  it('sends keepaliveMessage, uncompressed, to a connection sent nothing for keepaliveMs, and again after each', () => {
    const { beat, socket } = serve({ keepaliveMs: 1_000 });
    clock.advance(999);
    expect(socket.sends).toEqual([]);
    clock.advance(1);
    expect(socket.sends).toEqual([{ data: '', options: { compress: false } }]);
    clock.advance(3_000);
    expect(socket.keepalives()).toBe(4);
    expect(beat.stats().keepalivesSent).toBe(4);
  });

  it('sends the message given', () => {
    const { socket } = serve({ keepaliveMs: 100, keepaliveMessage: '{"type":"keepalive"}' });
    clock.advance(100);
    expect(socket.sends.map((s) => s.data)).toEqual(['{"type":"keepalive"}']);
  });

  it("is postponed by the app's own sends, noticed from the byte counter when the connection comes due", () => {
    const { socket } = serve({ keepaliveMs: 1_000 });
    clock.advance(400);
    socket.send('news'); // a send of the app's: no listener, no wrapper sees it
    clock.advance(600);
    // Due at 1 000: the counter moved, so the connection was sent something; next look at 2 000.
    expect(socket.keepalives()).toBe(0);
    clock.advance(999);
    expect(socket.keepalives()).toBe(0);
    clock.advance(1);
    expect(socket.keepalives()).toBe(1);
    // The gap the peer saw: 400 -> 2 000, under 2 x keepaliveMs.
  });

  it('never lets the peer go 2 x keepaliveMs without hearing anything, whatever the app sends when', () => {
    const { socket } = serve({ keepaliveMs: 1_000 });
    const heard: number[] = [];
    const send = socket.send.bind(socket);
    socket.send = (data: unknown, options?: unknown, cb?: (err?: Error) => void) => {
      heard.push(clock.now());
      send(data, options, cb);
    };
    // The app sends at irregular times, then stops.
    for (const at of [10, 990, 1_010, 2_500, 2_999, 4_001]) {
      clock.advanceTo(at);
      socket.send('app');
    }
    clock.advanceTo(20_000);
    for (let i = 1; i < heard.length; i++) expect(heard[i] - heard[i - 1]).toBeLessThanOrEqual(2_000);
    expect(20_000 - heard[heard.length - 1]).toBeLessThanOrEqual(1_000);
  });

  it('does not take its pings for sends: a quiet peer that answers pings still gets keepalives', () => {
    const { beat, socket } = serve({ pingIntervalMs: 300, pongTimeoutMs: 100, pingSlackMs: 0, keepaliveMs: 1_000 });
    for (let t = 0; t < 5_000; t += 10) {
      clock.advance(10);
      if (beat.state(socket.ws)?.awaitingPong === true) socket.pong();
    }
    expect(socket.pings).toBeGreaterThan(5);
    expect(socket.keepalives()).toBe(5);
    expect(beat.stats().dead).toBe(0);
  });

  it("is not the peer's activity: a peer that answers nothing is still declared dead", () => {
    const { beat, socket } = serve({ pingIntervalMs: 1_000, pongTimeoutMs: 500, pingSlackMs: 0, keepaliveMs: 200 });
    clock.advance(1_499);
    expect(socket.terminated).toBe(false);
    expect(socket.keepalives()).toBe(7);
    clock.advance(1);
    expect(socket.terminated).toBe(true);
    expect(beat.stats().dead).toBe(1);
  });

  it('counts as a write: writer idleness does not fire while keepalives go out', () => {
    const { beat, socket } = serve({ writerIdleMs: 1_500, keepaliveMs: 1_000 });
    const idle: string[] = [];
    beat.on('idle', (e) => idle.push(e.kind));
    clock.advance(10_000);
    expect(socket.keepalives()).toBe(10);
    expect(idle).toEqual([]);
  });

  it('stops with the heartbeat and with the connection', () => {
    const { beat, socket } = serve({ keepaliveMs: 100 });
    clock.advance(100);
    beat.stop();
    clock.advance(1_000);
    expect(socket.keepalives()).toBe(1);

    const other = serve({ keepaliveMs: 100 });
    other.socket.finishClose();
    clock.advance(1_000);
    expect(other.socket.keepalives()).toBe(0);
  });
});
