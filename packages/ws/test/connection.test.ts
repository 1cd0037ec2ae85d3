import { describe, expect, it } from 'vitest';
import { Connection, dataFrameBytes, MarkedConnection, PingPass, readingAt } from '../src/connection.js';
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
      expect(c.pong(31.25)).toBe(true);
      expect(c.lastReadAt).toBe(31.25);
      expect(c.snapshot().rttMs).toBe(1.25);
      c.read(40); // a fresh reading of its own: the shared one is not changed for the others
      expect(readingAt(31.25).at).toBe(31.25);
      expect(c.lastReadAt).toBe(40);
    });
  });

  describe('readingAt', () => {
    it('hands out one reading per time while the time does not change', () => {
      const a = readingAt(100);
      expect(readingAt(100)).toBe(a);
      expect(readingAt(101)).not.toBe(a);
      expect(readingAt(101).at).toBe(101);
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
      expect(c.lastReadAt).toBe(20);
      c.noticeReads(30);
      expect(c.lastReadAt).toBe(20);
    });
  });
});

describe('dataFrameBytes', () => {
  it('counts the header, the extended length and the mask of RFC 6455 §5.2', () => {
    const server = new FakeSocket().ws;
    const client = Object.assign(new FakeSocket(), { _isServer: false }).ws;
    expect(dataFrameBytes(server, 0)).toBe(2);
    expect(dataFrameBytes(server, 125)).toBe(127);
    expect(dataFrameBytes(server, 126)).toBe(130);
    expect(dataFrameBytes(server, 65_535)).toBe(65_539);
    expect(dataFrameBytes(server, 65_536)).toBe(65_546);
    expect(dataFrameBytes(client, 0)).toBe(6);
    expect(dataFrameBytes(client, 126)).toBe(134);
  });
});
