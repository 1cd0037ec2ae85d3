import type { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { heartbeat } from '../src/heartbeat.js';
import type { HeartbeatOptions, LimitEvent } from '../src/types.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';
import { useManualWheel, watchOne as watchOneOn } from './helpers/watch-one.js';

let clock: ManualClock;
let wheel: TimingWheel;
useManualWheel((c, w) => ([clock, wheel] = [c, w]));
const watchOne = (options: HeartbeatOptions = {}) => watchOneOn(wheel, options);

describe('heartbeat', () => {
  it('throws a TypeError for a target that is neither a ws server nor a socket', () => {
    expect(() => heartbeat({} as never, { wheel })).toThrow(TypeError);
    expect(() => heartbeat(null as never, { wheel })).toThrow(/WebSocketServer or WebSocket, got null/);
  });

  it('validates the options before attaching anything', () => {
    const server = new FakeServer();
    expect(() => heartbeat(server as never, { pingIntervalMs: -1, wheel })).toThrow(RangeError);
    expect(server.listenerCount('connection')).toBe(0);
  });

  it('adopts the connections a server already has', () => {
    const server = new FakeServer();
    const socket = new FakeSocket();
    server.clients.add(socket.ws);
    const beat = heartbeat(server as never, { pingIntervalMs: 100, wheel });
    expect(beat.size).toBe(1);
    expect(wheel.size).toBe(1);
  });

  it('watches a single client socket', () => {
    const socket = new FakeSocket();
    const beat = heartbeat(socket.ws, { pingIntervalMs: 100, pongTimeoutMs: 30, pingSlackMs: 0, wheel });
    clock.advance(100);
    expect(socket.pings).toBe(1);
    clock.advance(30);
    expect(socket.terminated).toBe(true);
    expect(beat.stats()).toEqual({ connections: 0, pingsSent: 1, dead: 1, idle: 0, limits: 0, keepalivesSent: 0 });
  });

  it('keeps one wheel handle per due time, shared by the connections due then', () => {
    const server = new FakeServer();
    const beat = heartbeat(server as never, { pingIntervalMs: 100, readerIdleMs: 50, writerIdleMs: 70, wheel });
    for (let i = 0; i < 5; i++) server.connect(new FakeSocket());
    expect(wheel.size).toBe(1);
    clock.advance(1);
    server.connect(new FakeSocket());
    expect(wheel.size).toBe(2);
    expect(beat.size).toBe(6);
  });

  describe('#state', () => {
    it('returns a snapshot of the liveness of a watched socket', () => {
      const { beat, socket } = watchOne({ writerIdleMs: 25 });
      clock.advance(20);
      socket.emit('message', Buffer.from('x'), false);
      clock.advance(10);
      socket.ws.send('y');
      // The write is seen when the connection next comes due (its writer idleness, at 50).
      expect(beat.state(socket.ws)!.lastWriteAt).toBe(0);
      clock.advance(20);
      const state = beat.state(socket.ws);
      expect(state).toEqual({
        attachedAt: 0,
        lastReadAt: 20,
        lastWriteAt: 50,
        tracksWrites: true,
        awaitingPong: false,
        lastPingAt: undefined,
        rttMs: undefined,
        pingsSent: 0,
      });
      socket.emit('message', Buffer.from('later'), false);
      expect(state!.lastReadAt).toBe(20);
    });

    it('returns undefined for a socket it does not watch', () => {
      const { beat } = watchOne();
      expect(beat.state(new FakeSocket().ws)).toBeUndefined();
    });

    it('answers undefined (state) and false (remove) for values that are not sockets, as for unwatched ones', () => {
      const { beat } = watchOne();
      for (const value of [null, undefined, 42, 'socket', {}]) {
        expect(beat.state(value as never)).toBeUndefined();
        expect(beat.remove(value as never)).toBe(false);
      }
      expect(beat.size).toBe(1);
    });

    it('leaves the socket object without new properties', () => {
      const { socket } = watchOne();
      expect(Object.keys(socket).sort()).toEqual(Object.keys(new FakeSocket()).sort());
    });
  });

  describe('#add', () => {
    it('starts watching a CONNECTING socket when it opens', () => {
      const socket = new FakeSocket();
      socket.readyState = 0;
      const beat = heartbeat(socket.ws, { pingIntervalMs: 100, wheel });
      expect(beat.size).toBe(0);
      clock.advance(200);
      socket.readyState = 1;
      socket.emit('open');
      expect(beat.size).toBe(1);
      expect(beat.state(socket.ws)!.attachedAt).toBe(200);
      expect(socket.listenerCount('open')).toBe(0);
    });

    it('forgets a CONNECTING socket that fails to open', () => {
      const socket = new FakeSocket();
      socket.readyState = 0;
      const beat = heartbeat(socket.ws, { pingIntervalMs: 100, wheel });
      socket.finishClose();
      expect(socket.listenerCount('open') + socket.listenerCount('close')).toBe(0);
      expect(beat.size).toBe(0);
    });

    it('ignores a closed socket and a socket it already watches', () => {
      const { beat, socket } = watchOne();
      const closed = new FakeSocket();
      closed.readyState = 3;
      beat.add(closed.ws);
      beat.add(socket.ws);
      expect(beat.size).toBe(1);
      expect(wheel.size).toBe(1);
    });

    it('throws after stop()', () => {
      const { beat } = watchOne();
      beat.stop();
      expect(() => beat.add(new FakeSocket().ws)).toThrow(/stopped/);
    });
  });

  describe('#remove', () => {
    it('stops watching one socket and leaves it open', () => {
      const { beat, socket } = watchOne({ writerIdleMs: 50 });
      expect(beat.remove(socket.ws)).toBe(true);
      expect(beat.remove(socket.ws)).toBe(false);
      clock.advance(1_000);
      expect(socket.pings).toBe(0);
      expect(socket.closed).toEqual([]);
      expect(Object.prototype.hasOwnProperty.call(socket, 'send')).toBe(false);
      expect(wheel.size).toBe(0);
    });
  });

  describe('#stop', () => {
    it('detaches everything and leaves the connections open', () => {
      const server = new FakeServer();
      const beat = heartbeat(server as never, { pingIntervalMs: 100, writerIdleMs: 50, wheel });
      const sockets = [new FakeSocket(), new FakeSocket(), new FakeSocket()];
      for (const s of sockets) server.connect(s);
      beat.stop();
      expect(beat.isStopped).toBe(true);
      expect(wheel.size).toBe(0);
      expect(server.listenerCount('connection')).toBe(0);
      for (const s of sockets) {
        expect(
          s.listenerCount('message') + s.listenerCount('ping') + s.listenerCount('pong') + s.listenerCount('close'),
        ).toBe(0);
        expect(Object.prototype.hasOwnProperty.call(s, 'send')).toBe(false);
      }
      server.connect(new FakeSocket());
      clock.advance(1_000);
      expect(sockets.map((s) => [s.pings, s.closed.length, s.terminated])).toEqual([
        [0, 0, false],
        [0, 0, false],
        [0, 0, false],
      ]);
      expect(beat.size).toBe(0);
    });

    it('is idempotent', () => {
      const { beat } = watchOne();
      beat.stop();
      beat.stop();
      expect(beat.isStopped).toBe(true);
    });

    it('detaches every record when a listener stops it in the middle of a pass: pinged, and not run yet', () => {
      const server = new FakeServer();
      const beat = heartbeat(server as never, { pingIntervalMs: 100, pingSlackMs: 0, readerIdleMs: 100, wheel });
      const sockets = [new FakeSocket(), new FakeSocket(), new FakeSocket()];
      for (const s of sockets) server.connect(s);
      let idle = 0;
      beat.on('idle', () => {
        // The first record was pinged and is held in the pass; the others have not run yet.
        if (++idle === 1) beat.stop();
      });
      clock.advance(100);
      expect(idle).toBe(1);
      expect(sockets.map((s) => s.pings)).toEqual([1, 0, 0]);
      expect(beat.size).toBe(0);
      expect(wheel.size).toBe(0);
      for (const s of sockets) expect(s.listenerCount('message') + s.listenerCount('pong')).toBe(0);
      clock.advance(1_000);
      expect(sockets.map((s) => [s.pings, s.terminated])).toEqual([
        [1, false],
        [0, false],
        [0, false],
      ]);
      expect(beat.state(sockets[0].ws)).toBeUndefined();
    });

    it('detaches a record that is closing for idleness (closeOnIdle) before its close completes', () => {
      const { beat, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        writerIdleMs: 50,
        closeOnIdle: true,
        trackWrites: true,
      });
      clock.advance(50);
      expect(socket.closed).toHaveLength(1);
      expect(beat.size).toBe(1);
      beat.stop();
      expect(beat.size).toBe(0);
      expect(socket.listenerCount('pong')).toBe(0);
      expect(Object.prototype.hasOwnProperty.call(socket, 'send')).toBe(false);
      socket.finishClose();
      expect(wheel.size).toBe(0);
    });
  });

  describe('a socket watched by two heartbeats', () => {
    /** The server's heartbeat and one on one of its sockets, as an app that wants other timings for it. */
    function watchTwice() {
      const { server, beat, socket, dead } = watchOne({ pingIntervalMs: 100, pongTimeoutMs: 30 });
      const own = heartbeat(socket.ws, { pingIntervalMs: 70, pongTimeoutMs: 50, pingSlackMs: 0, wheel });
      return { server, beat, own, socket, dead };
    }

    it('gives each its own record: both ping, both see the answers, neither sees the other', () => {
      const { beat, own, socket } = watchTwice();
      expect([beat.size, own.size]).toEqual([1, 1]);
      clock.advanceTo(70);
      expect(socket.pings).toBe(1);
      clock.advanceTo(100);
      expect(socket.pings).toBe(2);
      clock.advanceTo(110);
      socket.emit('pong', Buffer.alloc(0)); // answers both
      expect(own.state(socket.ws)).toMatchObject({ pingsSent: 1, lastPingAt: 70, rttMs: 40 });
      expect(beat.state(socket.ws)).toMatchObject({ pingsSent: 1, lastPingAt: 100, rttMs: 10 });
      expect(socket.terminated).toBe(false);
      expect(Object.keys(socket).sort()).toEqual(Object.keys(new FakeSocket()).sort());
    });

    it('keeps watching with one after the other lets go, by remove() or stop(), and lets it come back', () => {
      const { beat, own, socket, dead } = watchTwice();
      expect(beat.remove(socket.ws)).toBe(true);
      expect(beat.state(socket.ws)).toBeUndefined();
      expect(own.state(socket.ws)).toBeDefined();
      beat.add(socket.ws);
      expect(beat.state(socket.ws)).toMatchObject({ attachedAt: 0 });
      own.stop();
      expect(own.state(socket.ws)).toBeUndefined();
      expect(beat.size).toBe(1);
      clock.advanceTo(100);
      expect(socket.pings).toBe(1);
      clock.advanceTo(130);
      expect(socket.terminated).toBe(true);
      expect(dead).toHaveLength(1);
      expect([beat.size, own.size]).toEqual([0, 0]);
    });

    it('lets both forget a socket that closes', () => {
      const { beat, own, socket } = watchTwice();
      socket.finishClose();
      expect([beat.size, own.size]).toEqual([0, 0]);
      expect(socket.listenerCount('pong')).toBe(0);
      expect(wheel.size).toBe(0);
    });

    it('watches a socket handed to add() of two controllers (noServer setups)', () => {
      const socket = new FakeSocket();
      const first = heartbeat(new FakeServer() as never, { pingIntervalMs: 100, pingSlackMs: 0, wheel });
      const second = heartbeat(new FakeServer() as never, { pingIntervalMs: 100, pingSlackMs: 0, wheel });
      first.add(socket.ws);
      second.add(socket.ws);
      second.add(socket.ws);
      expect([first.size, second.size]).toEqual([1, 1]);
      clock.advanceTo(100);
      expect(socket.pings).toBe(2);
      expect(first.remove(socket.ws)).toBe(true);
      expect(first.remove(socket.ws)).toBe(false);
      expect(second.remove(socket.ws)).toBe(true);
      expect(wheel.size).toBe(0);
    });

    it('answers nothing about a socket another heartbeat watches', () => {
      const { socket } = watchOne();
      const other = heartbeat(new FakeServer() as never, { pingIntervalMs: 100, wheel });
      expect(other.state(socket.ws)).toBeUndefined();
      expect(other.remove(socket.ws)).toBe(false);
      expect(other.size).toBe(0);
    });
  });

  describe('close', () => {
    it('cancels the handle when the socket closes', () => {
      const { beat, socket } = watchOne();
      const cancelledBefore = wheel.stats().cancelled;
      socket.finishClose();
      expect(wheel.size).toBe(0);
      expect(wheel.stats().cancelled).toBe(cancelledBefore + 1);
      expect(beat.size).toBe(0);
      expect(socket.listenerCount('pong')).toBe(0);
    });

    it('neither pings nor reports a socket that is closing', () => {
      const { socket, dead, idle } = watchOne({ readerIdleMs: 50 });
      socket.readyState = 2;
      clock.advance(1_000);
      expect(socket.pings).toBe(0);
      expect(dead).toEqual([]);
      expect(idle).toEqual([]);
    });
  });

  describe('reads without listeners', () => {
    it('notices a talking peer from its byte counter, with no listener per message', () => {
      const { server, beat } = watchOne();
      const socket = new FakeSocket({ transport: true });
      server.connect(socket);
      expect(socket.listenerCount('message')).toBe(0);
      expect(socket.listenerCount('ping')).toBe(0);
      for (let t = 0; t < 1_000; t += 40) {
        clock.advanceTo(t);
        socket.receiveBytes(10);
      }
      expect(socket.pings).toBe(0);
      expect(beat.state(socket.ws)!.pingsSent).toBe(0);
    });

    it('listens to reads when reader idleness needs their exact times', () => {
      const { server } = watchOne({ readerIdleMs: 500 });
      const socket = new FakeSocket({ transport: true });
      server.connect(socket);
      expect(socket.listenerCount('message')).toBe(1);
    });
  });

  describe('listeners removed by the user', () => {
    it('does not terminate a healthy peer after socket.removeAllListeners()', () => {
      const { server, beat, dead } = watchOne();
      const socket = new FakeSocket({ transport: true });
      server.connect(socket);
      socket.removeAllListeners();
      let answered = 0;
      for (let t = 1; t <= 1_000; t++) {
        clock.advanceTo(t);
        if (socket.pings > answered) {
          answered = socket.pings;
          socket.emit('pong', Buffer.alloc(0)); // nobody listens: only the byte counter moves
        }
      }
      expect(socket.terminated).toBe(false);
      expect(dead.map((event) => event.socket)).not.toContain(socket.ws);
      expect(socket.pings).toBeGreaterThanOrEqual(4);
      expect(beat.state(socket.ws)!.pingsSent).toBe(socket.pings);
    });

    it('drops the record of a socket that closed after its close listener was removed', () => {
      const { beat, socket } = watchOne();
      socket.removeAllListeners();
      socket.finishClose();
      expect(beat.size).toBe(1);
      clock.advance(100);
      expect(beat.size).toBe(0);
      expect(wheel.size).toBe(0);
    });

    it('keeps looking at a socket stuck in CLOSING until it is closed', () => {
      const { beat, socket } = watchOne();
      socket.removeAllListeners();
      socket.readyState = 2;
      clock.advance(100);
      expect(beat.size).toBe(1);
      socket.readyState = 3;
      clock.advance(1_000);
      expect(beat.size).toBe(0);
    });

    it("puts its connection hook back after wss.removeAllListeners('connection'), adopting sockets that came in between", async () => {
      const { server, beat } = watchOne();
      server.on('connection', () => {});
      server.removeAllListeners('connection');
      const early = new FakeSocket();
      server.connect(early); // before the hook is back: picked up from server.clients
      await new Promise((resolve) => process.nextTick(resolve));
      const late = new FakeSocket();
      server.connect(late);
      expect(beat.state(early.ws)).toBeDefined();
      expect(beat.state(late.ws)).toBeDefined();
      expect(beat.size).toBe(3);
    });

    it('survives wss.removeAllListeners() with no argument', async () => {
      const { server, beat } = watchOne();
      server.removeAllListeners();
      await new Promise((resolve) => process.nextTick(resolve));
      server.connect(new FakeSocket());
      expect(beat.size).toBe(2);
      beat.stop();
      expect(server.listenerCount('connection')).toBe(0);
      expect(server.listenerCount('removeListener')).toBe(0);
    });
  });

  describe('one heartbeat per target', () => {
    it('refuses a second heartbeat() on the same server, so no connection is pinged twice', () => {
      const { server, beat } = watchOne();
      expect(() => heartbeat(server as never, { wheel })).toThrow(/already running on this target/);
      beat.stop();
      expect(() => heartbeat(server as never, { wheel }).stop()).not.toThrow();
    });

    it('refuses a second heartbeat() on the same socket', () => {
      const socket = new FakeSocket();
      const beat = heartbeat(socket.ws, { wheel });
      expect(() => heartbeat(socket.ws, { wheel })).toThrow(/already running/);
      beat.stop();
    });
  });

  describe('connection limits', () => {
    /** A heartbeat with pings off and `options`, one socket, and its 'limit' events. */
    function limited(options: HeartbeatOptions) {
      const { beat, socket, server } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        ...options,
      });
      const limits: LimitEvent[] = [];
      beat.on('limit', (e) => limits.push(e));
      return { beat, socket, server, limits };
    }

    it('closes with 1008 a connection that sent no data message within firstMessageMs', () => {
      const { socket, limits, beat } = limited({ firstMessageMs: 50 });
      socket.emit('ping', Buffer.alloc(0)); // not a data message
      clock.advance(49);
      expect(socket.closed).toEqual([]);
      clock.advance(1);
      expect(limits.map((e) => [e.reason, e.kind, e.socket])).toEqual([['limit', 'firstMessage', socket.ws]]);
      expect(socket.closed).toEqual([{ code: 1008, reason: 'no message in time' }]);
      expect(beat.stats().limits).toBe(1);
      socket.finishClose();
      expect(beat.size).toBe(0);
    });

    it('never touches a connection that sent one, nor one the app admitted', () => {
      const { socket, limits, beat, server } = limited({ firstMessageMs: 50 });
      const listening = socket.listenerCount('message');
      socket.emit('message', Buffer.from('hello'), false);
      // Its first-message listener is gone with the wait.
      expect(socket.listenerCount('message')).toBe(listening - 1);
      const admitted = new FakeSocket();
      server.connect(admitted);
      clock.advance(10);
      expect(beat.admit(admitted.ws)).toBe(true);
      expect(beat.admit(admitted.ws)).toBe(false);
      clock.advance(1_000);
      expect(limits).toEqual([]);
      expect([socket.closed, admitted.closed]).toEqual([[], []]);
    });

    it('closes with 1001 at the end of maxLifetimeMs, spread by lifetimeJitter', () => {
      const server = new FakeServer();
      const beat = heartbeat(server as never, { pingIntervalMs: 0, maxLifetimeMs: 1_000, lifetimeJitter: 0.5, wheel });
      const limits: LimitEvent[] = [];
      beat.on('limit', (e) => limits.push(e));
      const sockets = Array.from({ length: 40 }, () => new FakeSocket());
      for (const s of sockets) server.connect(s);
      clock.advance(499);
      expect(limits).toEqual([]);
      const closedAt = new Map<FakeSocket, number>();
      for (let t = 500; t <= 1_000; t++) {
        clock.advance(1);
        for (const s of sockets) if (s.closed.length > 0 && !closedAt.has(s)) closedAt.set(s, t);
      }
      expect(closedAt.size).toBe(40);
      expect(new Set(closedAt.values()).size).toBeGreaterThan(10); // spread, not one wave
      expect(sockets[0].closed).toEqual([{ code: 1001, reason: 'connection lifetime reached' }]);
      expect(limits.every((e) => e.kind === 'lifetime')).toBe(true);
    });

    it('terminates a consumer whose bufferedAmount stays above maxBufferedBytes for drainTimeoutMs', () => {
      const { socket, limits, beat } = limited({ maxBufferedBytes: 1_000, drainTimeoutMs: 50 });
      socket.bufferedAmount = 10_000;
      clock.advance(50); // seen above
      clock.advance(49);
      expect(socket.terminated).toBe(false);
      clock.advance(1);
      expect(socket.terminated).toBe(true);
      expect(limits.map((e) => e.kind)).toEqual(['slowConsumer']);
      expect(beat.size).toBe(0);
    });

    it('runs on the shared due-time handles: one wheel handle for many connections due together', () => {
      const server = new FakeServer();
      heartbeat(server as never, { pingIntervalMs: 0, firstMessageMs: 100, maxLifetimeMs: 100, wheel });
      for (let i = 0; i < 100; i++) server.connect(new FakeSocket());
      expect(wheel.size).toBe(1);
    });
  });

  describe('keepaliveMs', () => {
    /** A server heartbeat with pings off unless given, and one connection whose sends are recorded with their options. */
    const serve = (options: HeartbeatOptions, { counter = true } = {}) => {
      const server = new FakeServer();
      const beat = heartbeat(server as never, { pingIntervalMs: 0, wheel, ...options });
      const socket = new FakeSocket();
      const sends: Array<{ at: number; data: unknown; options: unknown }> = [];
      // Without a counter: a stand-in whose transport tells nothing, and whose sends count nowhere.
      if (!counter) (socket as { _socket: unknown })._socket = null;
      const send = counter ? socket.send.bind(socket) : () => undefined;
      // Recorded by a stand-in on the instance, installed before the heartbeat sees the socket.
      socket.send = (data: unknown, opts?: unknown, cb?: (err?: Error) => void) => {
        sends.push({ at: clock.now(), data, options: typeof opts === 'function' ? undefined : opts });
        send(data, opts, cb);
      };
      server.connect(socket);
      const keepalives = (message = '') => sends.filter((s) => s.data === message).length;
      return { beat, socket, sends, keepalives };
    };

    it('sends keepaliveMessage, uncompressed, to a connection sent nothing for keepaliveMs, and again after each', () => {
      const { beat, sends, keepalives } = serve({ keepaliveMs: 1_000 });
      clock.advance(999);
      expect(sends).toEqual([]);
      clock.advance(1);
      expect(sends).toEqual([{ at: 1_000, data: '', options: { compress: false } }]);
      clock.advance(3_000);
      expect(keepalives()).toBe(4);
      expect(beat.stats().keepalivesSent).toBe(4);
      expect(beat.options).toMatchObject({ keepaliveMs: 1_000, keepaliveMessage: '', trackWrites: true });
    });

    it('sends the message given', () => {
      const { sends } = serve({ keepaliveMs: 100, keepaliveMessage: '{"type":"keepalive"}' });
      clock.advance(100);
      expect(sends.map((s) => s.data)).toEqual(['{"type":"keepalive"}']);
    });

    it("is postponed by the app's own sends, noticed from the byte counter when the connection comes due", () => {
      const { socket, keepalives } = serve({ keepaliveMs: 1_000 });
      clock.advance(400);
      socket.send('news'); // the app's: no listener, no wrapper sees it
      clock.advance(600);
      // Due at 1 000: the counter moved, so the connection was sent something; next look at 2 000.
      expect(keepalives()).toBe(0);
      clock.advance(999);
      expect(keepalives()).toBe(0);
      clock.advance(1);
      expect(keepalives()).toBe(1);
    });

    it('never lets the peer go 2 x keepaliveMs without hearing anything, whatever the app sends when', () => {
      const { socket, sends } = serve({ keepaliveMs: 1_000 });
      for (const at of [10, 990, 1_010, 2_500, 2_999, 4_001]) {
        clock.advanceTo(at);
        socket.send('app');
      }
      clock.advanceTo(20_000);
      const heard = sends.map((s) => s.at);
      for (let i = 1; i < heard.length; i++) expect(heard[i] - heard[i - 1]).toBeLessThanOrEqual(2_000);
      expect(20_000 - heard[heard.length - 1]).toBeLessThanOrEqual(1_000);
    });

    it('does not take its pings for sends: a quiet peer that answers them still gets keepalives', () => {
      const { beat, socket, keepalives } = serve({
        pingIntervalMs: 300,
        pongTimeoutMs: 100,
        pingSlackMs: 0,
        keepaliveMs: 1_000,
      });
      for (let t = 0; t < 5_000; t += 10) {
        clock.advance(10);
        if (beat.state(socket.ws)?.awaitingPong === true) socket.emit('pong', Buffer.alloc(0));
      }
      expect(socket.pings).toBeGreaterThan(5);
      expect(keepalives()).toBe(5);
      expect(beat.stats().dead).toBe(0);
    });

    it('does not take the pongs ws sends by itself, in answer to the peer, for sends', () => {
      const { socket, keepalives } = serve({ keepaliveMs: 1_000 });
      for (let t = 0; t < 5_000; t += 10) {
        clock.advance(10);
        if (t % 250 === 0) socket.emit('ping', Buffer.from('peer'));
      }
      expect(keepalives()).toBe(5);
    });

    it("is not the peer's activity: a peer that answers nothing is still declared dead", () => {
      const { beat, socket, keepalives } = serve({
        pingIntervalMs: 1_000,
        pongTimeoutMs: 500,
        pingSlackMs: 0,
        keepaliveMs: 200,
      });
      clock.advance(1_499);
      expect(socket.terminated).toBe(false);
      // Including the two due while the ping awaited its answer.
      expect(keepalives()).toBe(7);
      clock.advance(1);
      expect(socket.terminated).toBe(true);
      expect(beat.stats().dead).toBe(1);
    });

    it('counts as a write: lastWriteAt moves, and writer idleness does not fire while keepalives go out', () => {
      const { beat, socket, keepalives } = serve({ writerIdleMs: 1_500, keepaliveMs: 1_000 });
      const idle: string[] = [];
      beat.on('idle', (e) => idle.push(e.kind));
      clock.advance(10_000);
      expect(keepalives()).toBe(10);
      expect(idle).toEqual([]);
      expect(beat.state(socket.ws)?.lastWriteAt).toBe(10_000);
    });

    it('sends one keepalive too many rather than too few on a socket with no byte counter', () => {
      const { socket, keepalives } = serve({ keepaliveMs: 100 }, { counter: false });
      clock.advance(50);
      socket.send('app');
      clock.advance(50);
      expect(keepalives()).toBe(1);
    });

    it('stops with the heartbeat and with the connection', () => {
      const { beat, keepalives } = serve({ keepaliveMs: 100 });
      clock.advance(100);
      beat.stop();
      clock.advance(1_000);
      expect(keepalives()).toBe(1);

      const other = serve({ keepaliveMs: 100 });
      other.socket.finishClose();
      clock.advance(1_000);
      expect(other.keepalives()).toBe(0);
    });
  });
});
