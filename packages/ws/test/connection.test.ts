import { describe, expect, it } from 'vitest';
import { Connection } from '../src/connection.js';
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
      c.awaitingPong = true;
      c.lastPingAt = 100;
      expect(c.snapshot().awaitingPong).toBe(true);
      c.lastReadAt = 101;
      expect(c.snapshot().awaitingPong).toBe(false);
    });
  });
});
