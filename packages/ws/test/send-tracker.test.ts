import { describe, expect, it } from 'vitest';
import { SendTracker } from '../src/send-tracker.js';
import { FakeSocket } from './helpers/fake-socket.js';

/** `send` as a property value, compared by identity and never called. */
const sendOf = (target: object): unknown => Reflect.get(target, 'send');

describe('SendTracker', () => {
  it('reports each completed send and still calls the caller back', () => {
    const socket = new FakeSocket();
    const written: Array<Error | undefined> = [];
    new SendTracker(socket.ws, (err) => written.push(err));
    const calls: Array<Error | undefined> = [];
    socket.ws.send('a');
    socket.ws.send('b', (err) => calls.push(err));
    socket.ws.send('c', { binary: true }, (err) => calls.push(err));
    expect(socket.sent).toEqual(['a', 'b', 'c']);
    expect(written).toEqual([undefined, undefined, undefined]);
    expect(calls).toEqual([undefined, undefined]);
  });

  it('passes a failed send on as an error', () => {
    const socket = new FakeSocket();
    const written: Array<Error | undefined> = [];
    new SendTracker(socket.ws, (err) => written.push(err));
    socket.readyState = 3;
    socket.ws.send('late');
    expect(written[0]).toBeInstanceOf(Error);
  });

  describe('#restore', () => {
    it('removes its own property, leaving the prototype method', () => {
      const socket = new FakeSocket();
      const tracker = new SendTracker(socket.ws, () => undefined);
      expect(Object.prototype.hasOwnProperty.call(socket, 'send')).toBe(true);
      tracker.restore();
      expect(Object.prototype.hasOwnProperty.call(socket, 'send')).toBe(false);
      expect(sendOf(socket)).toBe(sendOf(FakeSocket.prototype));
    });

    it('puts back an own send that was there before', () => {
      const socket = new FakeSocket();
      const own = function send(): void {};
      (socket as unknown as { send: unknown }).send = own;
      const tracker = new SendTracker(socket.ws, () => undefined);
      tracker.restore();
      expect((socket as unknown as { send: unknown }).send).toBe(own);
    });

    it('becomes a pass-through when another wrapper sits on top of it', () => {
      const socket = new FakeSocket();
      const written: unknown[] = [];
      const tracker = new SendTracker(socket.ws, (err) => written.push(err));
      const ours = (socket as unknown as { send: (data: unknown) => void }).send;
      const theirs = function (this: unknown, data: unknown): void {
        ours.call(socket, data);
      };
      (socket as unknown as { send: unknown }).send = theirs;
      tracker.restore();
      expect((socket as unknown as { send: unknown }).send).toBe(theirs);
      socket.ws.send('x');
      expect(socket.sent).toEqual(['x']);
      expect(written).toEqual([]);
    });

    it('is idempotent', () => {
      const socket = new FakeSocket();
      const tracker = new SendTracker(socket.ws, () => undefined);
      tracker.restore();
      tracker.restore();
      expect(sendOf(socket)).toBe(sendOf(FakeSocket.prototype));
    });
  });
});
