import { describeBudget, ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { heartbeat } from '../src/heartbeat.js';
import type { DeadPeerEvent, HeartbeatOptions } from '../src/types.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';
import { useManualWheel, watchOne as watchOneOn } from './helpers/watch-one.js';

let clock: ManualClock;
let wheel: TimingWheel;
useManualWheel((c, w) => ([clock, wheel] = [c, w]));
const watchOne = (options: HeartbeatOptions = {}) => watchOneOn(wheel, options);

describe('LivenessCheck', () => {
  describe('a ping queued behind our own data', () => {
    /** A connection with 1 MB of our own data queued on its transport. */
    function backlogged(): FakeSocket {
      const socket = new FakeSocket();
      socket.bufferedAmount = 1_000_000;
      socket._socket.bytesWritten += 1_000_000;
      socket._socket.writableLength = 1_000_000;
      return socket;
    }

    /** The 'dead' events of `socket` alone, live (watchOne's own socket never answers either). */
    const deadOf = (all: DeadPeerEvent[], socket: FakeSocket) => ({
      get list() {
        return all.filter((e) => e.socket === socket.ws);
      },
    });

    it('starts the pong deadline when the ping is written, while the data ahead of it drains', () => {
      const { server, dead: all } = watchOne();
      const socket = backlogged();
      server.connect(socket);
      const dead = deadOf(all, socket);
      clock.advance(100);
      expect(socket.pingCallbacks).toHaveLength(1);
      clock.advance(20);
      socket.drain(100_000);
      clock.advance(10); // the pass's deadline: not on the wire yet, and the queue moved
      expect(dead.list).toEqual([]);
      clock.advance(20);
      socket.drain(0, true); // written at 150
      clock.advance(29);
      expect(dead.list).toEqual([]);
      clock.advance(1);
      expect(dead.list.map((e) => [e.socket, e.waitedMs])).toEqual([[socket.ws, 30]]);
    });

    it('terminates a peer whose queue stands still for a whole interval: it is not reading', () => {
      const { server, dead: all } = watchOne();
      const socket = backlogged();
      server.connect(socket);
      const dead = deadOf(all, socket);
      // Pinged at 100; nothing leaves the queue for a whole interval.
      clock.advance(199);
      expect(dead.list).toEqual([]);
      clock.advance(1);
      expect(dead.list.map((e) => [e.socket, e.waitedMs])).toEqual([[socket.ws, 100]]);
    });

    it('takes an answer before the ping was reported written, and pings on as usual', () => {
      const { server, dead: all, beat } = watchOne();
      const socket = backlogged();
      server.connect(socket);
      const dead = deadOf(all, socket);
      clock.advance(110);
      socket.emit('pong', Buffer.alloc(0));
      socket.drain(0, true);
      clock.advance(100);
      expect(dead.list).toEqual([]);
      expect(socket.pings).toBe(2);
      expect(socket.pingCallbacks).toEqual([]);
      expect(beat.state(socket.ws)!.awaitingPong).toBe(true);
    });
  });

  describe('pings', () => {
    it('pings a connection that has been quiet for pingIntervalMs', () => {
      const { socket } = watchOne();
      clock.advance(99);
      expect(socket.pings).toBe(0);
      clock.advance(1);
      expect(socket.pings).toBe(1);
    });

    it('keeps watching a socket whose ping() threw: filed under its pong deadline, found by stop()', () => {
      const { server, beat, dead } = watchOne();
      const socket = new (class extends FakeSocket {
        override ping(): void {
          super.ping();
          throw new Error('ping failed');
        }
      })();
      server.connect(socket);
      expect(() => clock.advance(100)).toThrow(/ping failed/);
      expect(beat.state(socket.ws)!.awaitingPong).toBe(true);
      clock.advance(30);
      expect(dead.map((e) => e.socket)).toContain(socket.ws);
      const again = new (class extends FakeSocket {
        override ping(): void {
          throw new Error('ping failed');
        }
      })();
      server.connect(again);
      expect(() => clock.advance(100)).toThrow(/ping failed/);
      beat.stop();
      expect(again.listenerCount('pong')).toBe(0);
      expect(wheel.size).toBe(0);
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

    it('says how long since the last frame and how late the check ran, in the shape of every timeout', () => {
      const { dead } = watchOne();
      clock.advance(130);
      expect(dead[0].sinceLastFrameMs).toBe(130);
      expect(dead[0].budget).toEqual({
        limit: 'pongTimeoutMs',
        inherited: false,
        source: undefined,
        budgetMs: 30,
        spentBeforeMs: 0,
        elapsedMs: 30,
        lateMs: 0,
      });
      expect(describeBudget(dead[0].budget)).toBe('pongTimeoutMs of 30 ms: 30 ms in this call');
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

    /**
     * A heartbeat on a clock that reads `lagMs` late, as a wheel woken late by a busy loop does.
     * `beforeCheck` runs once the deadline (130) has passed by the lagging readings, before the
     * wheel checks it.
     */
    function watchLate(beforeCheck: (server: FakeServer) => void = () => {}) {
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
      lagging.advanceTo(125); // reads 135
      beforeCheck(server);
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

    it('lets go of a record waiting for that poll when the heartbeat stops meanwhile', async () => {
      const { socket, dead, beat, close } = watchLate();
      expect(beat.size).toBe(1);
      beat.stop();
      expect(beat.size).toBe(0);
      expect(socket.listenerCount('pong')).toBe(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(socket.terminated).toBe(false);
      expect(dead).toEqual([]);
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

    it('terminates at once when a poll already ran after the deadline (another pong was read since)', () => {
      const { socket, dead, close } = watchLate((server) => {
        const other = new FakeSocket();
        server.connect(other);
        other.emit('pong', Buffer.alloc(0)); // read at 135, after the deadline
      });
      expect(socket.terminated).toBe(true);
      expect(dead[0].waitedMs).toBe(40);
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

    it('reports writer idleness from the bytes written, seen when the connection comes due', () => {
      const { idle, socket, beat } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        writerIdleMs: 50,
      });
      clock.advance(40);
      socket.ws.send('hello');
      clock.advance(10);
      // Due at 50: the counter moved, so the connection wrote within the interval; no event.
      expect(idle).toEqual([]);
      expect(beat.state(socket.ws)!.lastWriteAt).toBe(50);
      clock.advance(49);
      expect(idle).toEqual([]);
      clock.advance(1);
      expect(idle.map((e) => [e.kind, e.idleMs])).toEqual([['writer', 50]]);
    });

    it("does not count ws's automatic pongs to the peer's pings as writes", () => {
      const { idle, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        writerIdleMs: 50,
      });
      for (let t = 0; t < 40; t += 10) {
        clock.advance(10);
        socket.emit('ping', Buffer.from('are you there'));
      }
      clock.advance(10);
      expect(idle.map((e) => [e.kind, e.idleMs])).toEqual([['writer', 50]]);
    });

    it('counts the automatic pongs as writes when ws sends none (autoPong: false)', () => {
      const { idle, socket } = watchOne({
        pingIntervalMs: 0,
        pongTimeoutMs: undefined,
        pingSlackMs: undefined,
        writerIdleMs: 50,
      });
      (socket as unknown as { _autoPong: boolean })._autoPong = false;
      clock.advance(10);
      // No pong goes out, so these bytes are the app's own (it answers by hand).
      socket.emit('ping', Buffer.from('x'));
      // As many bytes as the automatic pong would have been: taken off, they would hide this write.
      socket.ws.send('x');
      clock.advance(40);
      expect(idle).toEqual([]);
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
});
