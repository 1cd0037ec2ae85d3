import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { CloseWatch } from '../src/close-watch.js';
import { FakeSocket } from './helpers/fake-socket.js';

/** What ws keeps as `_receiver`: a Writable whose symbol-keyed property points back to its socket. */
const kSocket = Symbol('websocket');

function withReader(socket: FakeSocket): EventEmitter {
  const reader = Object.assign(new EventEmitter(), { _writableState: {}, [kSocket]: socket });
  (socket as unknown as { _receiver: EventEmitter })._receiver = reader;
  return reader;
}

function watching(): { watch: CloseWatch; closed: WebSocket[] } {
  const closed: WebSocket[] = [];
  return { watch: new CloseWatch((socket) => closed.push(socket)), closed };
}

describe('CloseWatch', () => {
  describe('#watch', () => {
    it("hears the frame reader finish, with no listener among the socket's own", () => {
      const { watch, closed } = watching();
      const socket = new FakeSocket();
      const reader = withReader(socket);
      socket.on('close', () => undefined); // ws's own, as a tracking server adds it
      watch.watch(socket.ws);
      expect(socket.listenerCount('close')).toBe(1);
      reader.emit('finish');
      expect(closed).toEqual([socket.ws]);
    });

    it('hears a reader destroyed by a bad frame (its close, with no finish)', () => {
      const { watch, closed } = watching();
      const socket = new FakeSocket();
      const reader = withReader(socket);
      watch.watch(socket.ws);
      reader.emit('close');
      expect(closed).toEqual([socket.ws]);
    });

    it("is not reached by the user's socket.removeAllListeners()", () => {
      const { watch, closed } = watching();
      const socket = new FakeSocket();
      const reader = withReader(socket);
      watch.watch(socket.ws);
      socket.removeAllListeners();
      reader.emit('finish');
      expect(closed).toEqual([socket.ws]);
    });

    it("listens to the socket's 'close' when it has no frame reader that points back to it", () => {
      const { watch, closed } = watching();
      const bare = new FakeSocket();
      const stranger = new FakeSocket();
      (stranger as unknown as { _receiver: EventEmitter })._receiver = Object.assign(new EventEmitter(), {
        _writableState: {},
      });
      watch.watch(bare.ws);
      watch.watch(stranger.ws);
      expect(bare.listenerCount('close')).toBe(1);
      expect(stranger.listenerCount('close')).toBe(1);
      bare.finishClose();
      stranger.finishClose();
      expect(closed).toEqual([bare.ws, stranger.ws]);
    });
  });

  describe('#unwatch', () => {
    it('removes its hooks from the reader or the socket', () => {
      const { watch, closed } = watching();
      const socket = new FakeSocket();
      const reader = withReader(socket);
      const bare = new FakeSocket();
      watch.watch(socket.ws);
      watch.watch(bare.ws);
      watch.unwatch(socket.ws);
      watch.unwatch(bare.ws);
      expect(reader.listenerCount('finish') + reader.listenerCount('close')).toBe(0);
      expect(bare.listenerCount('close')).toBe(0);
      reader.emit('finish');
      bare.finishClose();
      expect(closed).toEqual([]);
    });
  });
});
