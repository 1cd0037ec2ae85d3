import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { SpentCall } from '../src/spent-call.js';

describe('spent-call', () => {
  describe('SpentCall', () => {
    it('delivers its status on the next tick, never inside start() (as grpc-js delivers its own errors)', async () => {
      const call = new SpentCall(status.DEADLINE_EXCEEDED, 'Deadline exceeded before the call started');
      const received: StatusObject[] = [];
      call.start(new Metadata(), { onReceiveStatus: (s) => received.push(s) });
      expect(received).toEqual([]);
      await new Promise((resolve) => process.nextTick(resolve));
      expect(received).toHaveLength(1);
      expect(received[0].code).toBe(status.DEADLINE_EXCEEDED);
      expect(received[0].details).toBe('Deadline exceeded before the call started');
      expect(received[0].metadata).toBeInstanceOf(Metadata);
      expect(received[0].metadata.getMap()).toEqual({});
    });

    it('sends nothing anywhere: every other operation is a no-op', async () => {
      const call = new SpentCall(status.CANCELLED, 'parent cancelled');
      const received: unknown[] = [];
      call.start(new Metadata(), {
        onReceiveMetadata: (m) => received.push(['metadata', m]),
        onReceiveMessage: (m) => received.push(['message', m]),
        onReceiveStatus: (s) => received.push(['status', s.code]),
      });
      call.sendMessage({ text: 'x' });
      call.startRead();
      call.halfClose();
      call.cancelWithStatus(status.CANCELLED, 'again');
      expect(call.getPeer()).toBe('');
      await new Promise((resolve) => setImmediate(resolve));
      expect(received).toEqual([['status', status.CANCELLED]]);
    });

    it('accepts a start() without a listener', async () => {
      const call = new SpentCall(status.DEADLINE_EXCEEDED, 'x');
      expect(() => call.start(new Metadata())).not.toThrow();
      await new Promise((resolve) => setImmediate(resolve)); // the next tick finds no listener, and says nothing
    });
  });
});
