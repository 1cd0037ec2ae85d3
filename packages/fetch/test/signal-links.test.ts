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

    it('raises the listener limit to 1500 as fetch does with a signal it is given, only when asked', () => {
      const asFetch = new AbortController().signal;
      follow(asFetch, recorder(), true);
      expect(getMaxListeners(asFetch)).toBe(1500);
      const internal = new AbortController().signal;
      follow(internal, recorder(), false);
      expect(getMaxListeners(internal)).toBe(10);
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
