import { describe, expect, it } from 'vitest';
import { Connection, PingPass } from '../src/connection.js';
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
    it('takes bytes that no read event reported as a read noticed now', () => {
      const socket = new FakeSocket({ transport: true });
      const c = new Connection(socket.ws, 0);
      c.noticeReads(10);
      expect(c.lastReadAt).toBe(0);
      socket.receiveBytes(5);
      c.noticeReads(25);
      expect(c.lastReadAt).toBe(25);
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
});
