import { describe, expect, it } from 'vitest';
import { Connection, MarkedConnection } from '../src/connection.js';
import { PingPass, readingAt } from '../src/readings.js';
import { FakeSocket } from './helpers/fake-socket.js';

describe('Connection', () => {
  describe('#snapshot', () => {
    it('starts with every activity at the attach time and no ping', () => {
      const c = new Connection(new FakeSocket().ws, 42);
      expect(c.snapshot()).toEqual({
        attachedAt: 42,
        lastReadAt: 42,
        lastWriteAt: 42,
        tracksWrites: false,
        awaitingPong: false,
        lastPingAt: undefined,
        rttMs: undefined,
        pingsSent: 0,
      });
    });

    it('reports a ping as answered once anything was read after it', () => {
      const c = new Connection(new FakeSocket().ws, 0);
      c.pinged(new PingPass(100));
      expect(c.snapshot().awaitingPong).toBe(true);
      c.lastReadAt = 101;
      expect(c.snapshot().awaitingPong).toBe(false);
    });
  });

  describe('#noticeReads', () => {
    it('takes bytes that no read event reported as a read at the last sample that found bytes, a time known to precede them', () => {
      const socket = new FakeSocket({ transport: true });
      const c = new Connection(socket.ws, 0);
      socket.receiveBytes(5);
      c.noticeReads(10);
      expect(c.lastReadAt).toBe(0); // after the attach, the only time known before them
      expect(c.talking).toBe(true);
      c.noticeReads(20); // nothing new: 10 stays the time known to precede what comes next
      expect(c.talking).toBe(false);
      socket.receiveBytes(5);
      c.noticeReads(25);
      expect(c.lastReadAt).toBe(10);
      expect(c.talking).toBe(true);
      c.noticeReads(40);
      expect(c.lastReadAt).toBe(10);
      expect(c.talking).toBe(false);
    });

    it('takes such bytes as the answer to the outstanding ping, read at its time', () => {
      const socket = new FakeSocket({ transport: true });
      const c = new Connection(socket.ws, 0);
      c.noticeReads(100);
      c.pinged(new PingPass(100.5));
      socket.receiveBytes(2);
      c.noticeReads(130);
      expect(c.unanswered).toBe(false);
      expect(c.lastReadAt).toBe(100.5);
    });

    it('keeps the exact time of a read event recorded after the last sample', () => {
      const socket = new FakeSocket({ transport: true });
      const c = new Connection(socket.ws, 0);
      c.noticeReads(10);
      socket.receiveBytes(5);
      c.lastReadAt = 17; // what the 'message' listener writes
      c.readSinceMark = true;
      c.noticeReads(30);
      expect(c.lastReadAt).toBe(17);
    });

    it('does nothing for a socket without a transport', () => {
      const c = new Connection(new FakeSocket().ws, 0);
      expect(c.readMark).toBe(-1);
      c.noticeReads(50);
      expect(c.lastReadAt).toBe(0);
    });
  });

  describe('#attachedAt', () => {
    it('is the attach reading rounded up to the whole ms, never earlier', () => {
      const c = new Connection(new FakeSocket().ws, 41.2);
      expect(c.attachedAt).toBe(42);
      expect(c.lastReadAt).toBe(42);
      expect(new Connection(new FakeSocket().ws, 7).attachedAt).toBe(7);
    });
  });

  describe('#extra', () => {
    it('is no field of a default record, and a field of a marked one', () => {
      const plain = new Connection(new FakeSocket().ws, 0);
      const marked = new MarkedConnection(new FakeSocket().ws, 5);
      expect(plain.extra).toBeUndefined();
      expect(Object.hasOwn(plain, 'extra')).toBe(false);
      expect(marked.extra?.lastWriteAt).toBe(5);
      expect(marked.lastWriteAt).toBe(5);
    });
  });

  describe('#read and #pong', () => {
    it('rewrites its own reading in place for read events, and shares one for pongs', () => {
      const c = new Connection(new FakeSocket().ws, 0);
      c.read(10);
      c.read(20.5);
      expect(c.lastReadAt).toBe(20.5);
      c.pinged(new PingPass(30));
      expect(c.pong(31.25, 6)).toBe(true);
      expect(c.lastReadAt).toBe(31.25);
      expect(c.snapshot().rttMs).toBe(1.25);
      c.read(40); // a fresh reading of its own: the shared one is not changed for the others
      expect(readingAt(31.25).at).toBe(31.25);
      expect(c.lastReadAt).toBe(40);
    });

    it('counts as a sample that found its own bytes, so that talk after it counts from the pong on', () => {
      const socket = new FakeSocket({ transport: true });
      const c = new Connection(socket.ws, 0);
      c.noticeReads(100);
      c.pinged(new PingPass(100));
      socket.emit('pong', Buffer.alloc(0)); // its 6 bytes (masked, from a client), before the listener runs
      expect(c.pong(105, 6)).toBe(true);
      c.noticeReads(150);
      expect(c.talking).toBe(false);
      expect(c.lastReadAt).toBe(105);
      c.pinged(new PingPass(150));
      socket.emit('pong', Buffer.alloc(0));
      expect(c.pong(160, 6)).toBe(true);
      socket.receiveBytes(30);
      c.noticeReads(200);
      expect(c.lastReadAt).toBe(160);
      expect(c.talking).toBe(true);
    });
  });

  describe('#noticeReads past 2^31 bytes', () => {
    it('keeps noticing reads once the counter no longer fits a small integer', () => {
      const socket = new FakeSocket({ transport: true });
      socket._socket.bytesRead = 3e9;
      const c = new Connection(socket.ws, 0);
      c.noticeReads(10);
      expect(c.lastReadAt).toBe(0);
      socket.receiveBytes(6);
      c.noticeReads(20);
      expect(c.talking).toBe(true);
      socket.receiveBytes(6);
      c.noticeReads(30);
      expect(c.lastReadAt).toBe(20);
      c.noticeReads(40);
      expect(c.lastReadAt).toBe(20);
      expect(c.talking).toBe(false);
    });
  });
});
