import { getEventListeners, getMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { follow, unfollow, type SignalFollower } from '../src/signal-links.js';

function recorder(): SignalFollower & { heard: unknown[] } {
  const heard: unknown[] = [];
  return { heard, signalAborted: (signal) => void heard.push(signal.reason) };
}

describe('signal-links', () => {
  describe('follow', () => {
    it('adds one listener for any number of followers, and tells each of them once', () => {
      const controller = new AbortController();
      const followers = Array.from({ length: 50 }, recorder);
      for (const each of followers) follow(controller.signal, each, false);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      controller.abort('stop');
      expect(followers.every((each) => each.heard.length === 1 && each.heard[0] === 'stop')).toBe(true);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });

    it('raises the listener limit as fetch does with a signal it is given, only when asked', () => {
      const givenToFetch = new AbortController().signal;
      void new Request('http://127.0.0.1/', { signal: givenToFetch });
      const asFetch = new AbortController().signal;
      follow(asFetch, recorder(), true);
      // 1500 where Node's default is 10; Node 26 has no limit on signals (0) and fetch keeps it.
      expect(getMaxListeners(asFetch)).toBe(getMaxListeners(givenToFetch));
      const internal = new AbortController().signal;
      follow(internal, recorder(), false);
      expect(getMaxListeners(internal)).toBe(getMaxListeners(new AbortController().signal));
    });
  });

  describe('unfollow', () => {
    it('removes the listener when the last follower leaves, and leaves others alone', () => {
      const controller = new AbortController();
      const a = recorder();
      const b = recorder();
      follow(controller.signal, a, false);
      follow(controller.signal, b, false);
      unfollow(controller.signal, a);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      unfollow(controller.signal, a);
      unfollow(controller.signal, b);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      controller.abort();
      expect(a.heard).toEqual([]);
      expect(b.heard).toEqual([]);
    });
  });
});
