import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { heartbeat } from '../src/heartbeat.js';
import type { DeadPeerEvent, HeartbeatOptions, IdleEvent } from '../src/types.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';

let clock: ManualClock;
let wheel: TimingWheel;

beforeEach(() => {
  clock = new ManualClock(0);
  wheel = new TimingWheel({ clock });
});

afterEach(() => {
  wheel.close();
});

/** A heartbeat on a fake server with one connection, on the manual clock. */
function watchOne(options: HeartbeatOptions = {}) {
  const server = new FakeServer();
  const beat = heartbeat(server as never, {
    pingIntervalMs: 100,
    pongTimeoutMs: 30,
    pingSlackMs: 0,
    wheel,
    ...options,
  });
  const socket = new FakeSocket();
  server.connect(socket);
  const dead: DeadPeerEvent[] = [];
  const idle: IdleEvent[] = [];
  beat.on('dead', (e) => dead.push(e));
  beat.on('idle', (e) => idle.push(e));
  return { server, beat, socket, dead, idle };
}

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
    expect(beat.stats()).toEqual({ connections: 0, pingsSent: 1, dead: 1, idle: 0 });
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

  describe('pings', () => {
    it('pings a connection that has been quiet for pingIntervalMs', () => {
      const { socket } = watchOne();
      clock.advance(99);
      expect(socket.pings).toBe(0);
      clock.advance(1);
      expect(socket.pings).toBe(1);
    });

    it('never pings nor kills a connection that keeps receiving', () => {
      const { socket, dead } = watchOne();
      for (let t = 0; t < 2_000; t += 40) {
        clock.advance(40);
        socket.emit('message', Buffer.from('x'), false);
      }
      expect(socket.pings).toBe(0);
      expect(socket.terminated).toBe(false);
      expect(dead).toEqual([]);
    });

    it('counts pings received from the peer as read activity', () => {
      const { socket } = watchOne();
      for (let t = 0; t < 1_000; t += 90) {
        clock.advance(90);
        socket.emit('ping', Buffer.alloc(0));
      }
      expect(socket.pings).toBe(0);
    });

    it('pings again one interval after the answer', () => {
      const { socket } = watchOne();
      clock.advance(100);
      clock.advance(5);
      socket.emit('pong', Buffer.alloc(0));
      clock.advance(99);
      expect(socket.pings).toBe(1);
      clock.advance(1);
      expect(socket.pings).toBe(2);
    });

    it('runs no callback at the deadline of a ping that was answered', () => {
      const { socket } = watchOne();
      clock.advance(100);
      const fired = wheel.stats().fired;
      clock.advance(5);
      socket.emit('pong', Buffer.alloc(0));
      clock.advance(50);
      expect(wheel.stats().fired).toBe(fired);
      clock.advanceTo(205);
      expect(socket.pings).toBe(2);
    });

    it('records the round trip of an answered ping', () => {
      const { beat, socket } = watchOne();
      clock.advance(100);
      clock.advance(7);
      socket.emit('pong', Buffer.alloc(0));
      expect(beat.state(socket.ws)).toMatchObject({
        rttMs: 7,
        awaitingPong: false,
        lastPingAt: 100,
        lastReadAt: 107,
        pingsSent: 1,
      });
    });

    it('sends pings due close together in one pass, up to pingSlackMs late', () => {
      const server = new FakeServer();
      heartbeat(server as never, { pingIntervalMs: 100, pongTimeoutMs: 30, pingSlackMs: 10, wheel });
      const [a, b] = [new FakeSocket(), new FakeSocket()];
      clock.advance(1);
      server.connect(a);
      clock.advance(6);
      server.connect(b);
      const firedBefore = wheel.stats().fired;
      clock.advanceTo(109);
      expect([a.pings, b.pings]).toEqual([0, 0]);
      clock.advanceTo(110);
      expect([a.pings, b.pings]).toEqual([1, 1]);
      expect(wheel.stats().fired - firedBefore).toBe(1);
    });

    it('never delays the pong deadline by the slack', () => {
      const { socket, dead } = watchOne({ pingSlackMs: 50 });
      clock.advanceTo(100);
      expect(socket.pings).toBe(1);
      clock.advanceTo(130);
      expect(dead).toHaveLength(1);
      expect(dead[0].waitedMs).toBe(30);
    });

    it('sends no pings when pingIntervalMs is 0', () => {
      const { socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        readerIdleMs: 50,
      });
      clock.advance(1_000);
      expect(socket.pings).toBe(0);
      expect(socket.terminated).toBe(false);
    });
  });

  describe('dead peers', () => {
    it('terminates a peer that stops answering pings, exactly pongTimeoutMs after the ping', () => {
      const { socket, dead, beat } = watchOne();
      clock.advance(129);
      expect(socket.terminated).toBe(false);
      clock.advance(1);
      expect(socket.terminated).toBe(true);
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ reason: 'dead', socket: socket.ws, waitedMs: 30 });
      expect(dead[0].state).toMatchObject({ awaitingPong: true, lastPingAt: 100, lastReadAt: 0, pingsSent: 1 });
      expect(beat.state(socket.ws)).toBeUndefined();
      expect(wheel.size).toBe(0);
    });

    it('sends the close code and reason before terminating', () => {
      const { socket } = watchOne({ closeCode: 4000, closeReason: 'no pong' });
      clock.advance(130);
      expect(socket.closed).toEqual([{ code: 4000, reason: 'no pong' }]);
      expect(socket.terminated).toBe(true);
    });

    it('uses 1001 "heartbeat timeout" by default', () => {
      const { socket } = watchOne();
      clock.advance(130);
      expect(socket.closed).toEqual([{ code: 1001, reason: 'heartbeat timeout' }]);
    });

    it('takes any frame received after the ping as the answer', () => {
      const { socket, dead } = watchOne();
      clock.advance(110);
      socket.emit('message', Buffer.from('still here'), false);
      clock.advance(90);
      expect(dead).toEqual([]);
      expect(socket.pings).toBe(1);
      expect(socket.terminated).toBe(false);
    });

    /** A heartbeat on a clock that reads `lagMs` late, as a wheel woken late by a busy loop does. */
    function watchLate() {
      const lagging = new (class extends ManualClock {
        lagMs = 0;
        override now(): number {
          return super.now() + this.lagMs;
        }
      })(0);
      const lateWheel = new TimingWheel({ clock: lagging });
      const server = new FakeServer();
      const beat = heartbeat(server as never, {
        pingIntervalMs: 100,
        pongTimeoutMs: 30,
        pingSlackMs: 0,
        wheel: lateWheel,
      });
      const socket = new FakeSocket();
      server.connect(socket);
      const dead: DeadPeerEvent[] = [];
      beat.on('dead', (e) => dead.push(e));
      lagging.advanceTo(100);
      lagging.lagMs = 10;
      lagging.advanceTo(130); // the pong deadline is checked at 140
      return { beat, socket, dead, close: () => lateWheel.close() };
    }

    it('checks a pong deadline found late once more after the next I/O poll, then terminates', async () => {
      const { socket, dead, close } = watchLate();
      expect(socket.pings).toBe(1);
      expect(socket.terminated).toBe(false);
      await new Promise((resolve) => setImmediate(resolve));
      expect(socket.terminated).toBe(true);
      expect(dead[0].waitedMs).toBe(40);
      close();
    });

    it('keeps a peer whose answer is read in that poll', async () => {
      const { socket, dead, beat, close } = watchLate();
      socket.emit('pong', Buffer.alloc(0));
      await new Promise((resolve) => setImmediate(resolve));
      expect(socket.terminated).toBe(false);
      expect(dead).toEqual([]);
      expect(beat.state(socket.ws)!.awaitingPong).toBe(false);
      close();
    });

    it('keeps a peer that answers every ping through many rounds', () => {
      const { socket, dead } = watchOne();
      for (let round = 0; round < 20; round++) {
        clock.advance(100);
        clock.advance(10);
        socket.emit('pong', Buffer.alloc(0));
      }
      expect(socket.pings).toBe(20);
      expect(dead).toEqual([]);
    });
  });

  describe('idle', () => {
    it('reports reader idleness, then again every readerIdleMs while it lasts', () => {
      const { idle, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        readerIdleMs: 50,
      });
      clock.advance(49);
      expect(idle).toEqual([]);
      clock.advance(1);
      expect(idle.map((e) => [e.kind, e.idleMs, e.first])).toEqual([['reader', 50, true]]);
      clock.advance(50);
      expect(idle.map((e) => [e.kind, e.idleMs, e.first])).toEqual([
        ['reader', 50, true],
        ['reader', 100, false],
      ]);
      socket.emit('message', Buffer.from('x'), false);
      clock.advance(50);
      expect(idle.at(-1)).toMatchObject({ kind: 'reader', idleMs: 50, first: true, closing: false });
    });

    it('reports writer idleness measured from completed sends', () => {
      const { idle, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        writerIdleMs: 50,
      });
      clock.advance(40);
      socket.ws.send('hello');
      clock.advance(40);
      expect(idle).toEqual([]);
      clock.advance(10);
      expect(idle.map((e) => [e.kind, e.idleMs])).toEqual([['writer', 50]]);
    });

    it('does not count a failed send as write activity', () => {
      const { idle, socket, beat } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        writerIdleMs: 50,
      });
      clock.advance(40);
      socket.readyState = 2;
      socket.ws.send('too late');
      expect(beat.state(socket.ws)!.lastWriteAt).toBe(0);
      expect(idle).toEqual([]);
    });

    it('reports all-idleness only when neither side was active', () => {
      const { idle, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        allIdleMs: 50,
      });
      clock.advance(30);
      socket.ws.send('out');
      clock.advance(30);
      socket.emit('message', Buffer.from('in'), false);
      clock.advance(49);
      expect(idle).toEqual([]);
      clock.advance(1);
      expect(idle.map((e) => [e.kind, e.idleMs])).toEqual([['all', 50]]);
    });

    it('does not count its own pings as writes', () => {
      const { idle, socket } = watchOne({ pingIntervalMs: 20, pongTimeoutMs: 10, writerIdleMs: 100 });
      for (let t = 0; t < 100; t += 20) {
        clock.advance(20);
        socket.emit('pong', Buffer.alloc(0));
      }
      expect(socket.pings).toBeGreaterThan(3);
      expect(idle.map((e) => e.kind)).toEqual(['writer']);
    });

    it('only reports by default, leaving the connection open', () => {
      const { idle, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        readerIdleMs: 50,
      });
      clock.advance(500);
      expect(idle).toHaveLength(10);
      expect(socket.closed).toEqual([]);
    });

    it('closes with idleCloseCode and idleCloseReason when closeOnIdle is set', () => {
      const { idle, socket } = watchOne({
        readerIdleMs: 50,
        closeOnIdle: true,
        idleCloseCode: 4001,
        idleCloseReason: 'bye',
      });
      clock.advance(50);
      expect(idle).toMatchObject([{ kind: 'reader', closing: true }]);
      expect(socket.closed).toEqual([{ code: 4001, reason: 'bye' }]);
      expect(socket.pings).toBe(0);
      expect(wheel.size).toBe(0);
    });

    it('stays armed when an idle listener throws', () => {
      const { beat, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        readerIdleMs: 50,
      });
      beat.once('idle', () => {
        throw new Error('listener bug');
      });
      expect(() => clock.advance(50)).toThrow('listener bug');
      expect(wheel.size).toBe(1);
      expect(beat.state(socket.ws)).toBeDefined();
    });
  });

  describe('#state', () => {
    it('returns a snapshot of the liveness of a watched socket', () => {
      const { beat, socket } = watchOne({ writerIdleMs: 1_000 });
      clock.advance(20);
      socket.emit('message', Buffer.from('x'), false);
      clock.advance(10);
      socket.ws.send('y');
      const state = beat.state(socket.ws);
      expect(state).toEqual({
        attachedAt: 0,
        lastReadAt: 20,
        lastWriteAt: 30,
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
});
