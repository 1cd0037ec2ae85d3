import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { publishTerminate, terminateChannel } from '../src/channels.js';
import { WS_TERMINATE_CHANNEL } from '../src/index.js';

describe('channels', () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it('names its channel tickwheel:ws:terminate', () => {
    expect(WS_TERMINATE_CHANNEL).toBe('tickwheel:ws:terminate');
  });

  describe('publishTerminate', () => {
    it('publishes the reason, how long the peer was quiet, the limit, the socket and the side', () => {
      const messages: unknown[] = [];
      const listener = (message: unknown) => messages.push(message);
      diagnosticsChannel.subscribe(WS_TERMINATE_CHANNEL, listener);
      stop = () => diagnosticsChannel.unsubscribe(WS_TERMINATE_CHANNEL, listener);
      const socket = {};
      publishTerminate('pong-timeout', 1_002, 1_000, socket, 'server');
      publishTerminate('idle-reader', 30_000, 30_000, socket, 'client');
      expect(messages).toEqual([
        { reason: 'pong-timeout', quietMs: 1_002, limitMs: 1_000, socket, side: 'server' },
        { reason: 'idle-reader', quietMs: 30_000, limitMs: 30_000, socket, side: 'client' },
      ]);
    });

    it('does nothing while nobody listens', () => {
      expect(terminateChannel.hasSubscribers).toBe(false);
      expect(() => publishTerminate('pong-timeout', 1, 1, {}, 'server')).not.toThrow();
    });
  });
});
