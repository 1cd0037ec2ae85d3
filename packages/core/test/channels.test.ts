import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  captureContext,
  publishCallbackError,
  publishInContext,
  publishTimerSetExpire,
  publishWake,
  timerSetExpireChannel,
  wakeChannel,
  type TypedChannel,
} from '../src/channels.js';
import {
  CORE_CALLBACK_ERROR_CHANNEL,
  CORE_TIMER_SET_EXPIRE_CHANNEL,
  CORE_WAKE_CHANNEL,
  ManualClock,
  TimerSet,
  TimingWheel,
} from '../src/index.js';

/** Subscribes to a channel by name, as a user would; `stop()` unsubscribes. */
function listen(name: string): { messages: unknown[]; stop: () => void } {
  const messages: unknown[] = [];
  const listener = (message: unknown) => messages.push(message);
  diagnosticsChannel.subscribe(name, listener);
  return { messages, stop: () => diagnosticsChannel.unsubscribe(name, listener) };
}

describe('channels', () => {
  const stops: Array<() => void> = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });
  function subscribe(name: string): unknown[] {
    const { messages, stop } = listen(name);
    stops.push(stop);
    return messages;
  }

  it('names its channels tickwheel:core:*', () => {
    expect([CORE_WAKE_CHANNEL, CORE_CALLBACK_ERROR_CHANNEL, CORE_TIMER_SET_EXPIRE_CHANNEL]).toEqual([
      'tickwheel:core:wake',
      'tickwheel:core:callback-error',
      'tickwheel:core:timer-set-expire',
    ]);
    expect(wakeChannel).toBe(diagnosticsChannel.channel(CORE_WAKE_CHANNEL));
  });

  describe('captureContext', () => {
    it('captures nothing while nobody listens', () => {
      expect(wakeChannel.hasSubscribers).toBe(false);
      expect(captureContext(wakeChannel)).toBeUndefined();
    });

    it("captures the caller's async context once someone listens", () => {
      subscribe(CORE_WAKE_CHANNEL);
      const store = new AsyncLocalStorage<string>();
      const run = store.run('request 7', () => captureContext(wakeChannel));
      expect(run).toBeTypeOf('function');
      expect(run!(() => store.getStore())).toBe('request 7');
    });
  });

  describe('publishInContext', () => {
    const channel: TypedChannel<string> = diagnosticsChannel.channel('tickwheel:test:context');

    it('publishes in the captured context, so a subscriber sees the request it is about', () => {
      const store = new AsyncLocalStorage<string>();
      const seen: Array<[unknown, string | undefined]> = [];
      const listener = (message: unknown) => seen.push([message, store.getStore()]);
      diagnosticsChannel.subscribe('tickwheel:test:context', listener);
      stops.push(() => diagnosticsChannel.unsubscribe('tickwheel:test:context', listener));
      const context = store.run('request 7', () => captureContext(channel));
      // Published from some other request's context, as a wheel callback would be.
      store.run('request 9', () => {
        publishInContext(channel, 'timed out', context);
        publishInContext(channel, 'no context captured', undefined);
      });
      expect(seen).toEqual([
        ['timed out', 'request 7'],
        ['no context captured', undefined],
      ]);
    });
  });

  describe('publishWake', () => {
    it('publishes lateness (never negative), timers fired, callback time and what is left pending', () => {
      const messages = subscribe(CORE_WAKE_CHANNEL);
      const wheel = new TimingWheel({ clock: new ManualClock(0) });
      wheel.schedule(100, () => {});
      publishWake(wheel, 3.5, 2, 0.25);
      publishWake(wheel, -0.1, 0, 0);
      expect(messages).toEqual([
        { wheel, lateMs: 3.5, fired: 2, callbackMs: 0.25, pending: 1 },
        { wheel, lateMs: 0, fired: 0, callbackMs: 0, pending: 1 },
      ]);
      wheel.close();
    });
  });

  describe('publishCallbackError', () => {
    it('publishes the error and the handle, and nothing while nobody listens', () => {
      const wheel = new TimingWheel({ clock: new ManualClock(0) });
      const handle = wheel.schedule(1, () => {});
      const error = new Error('boom');
      publishCallbackError(wheel, error, handle);
      const messages = subscribe(CORE_CALLBACK_ERROR_CHANNEL);
      publishCallbackError(wheel, error, handle);
      expect(messages).toEqual([{ wheel, error, handle }]);
      wheel.close();
    });
  });

  describe('publishTimerSetExpire', () => {
    it('publishes the set, the key and the stacks left', () => {
      const messages = subscribe(CORE_TIMER_SET_EXPIRE_CHANNEL);
      const wheel = new TimingWheel({ clock: new ManualClock(0) });
      const set = new TimerSet<string, string>({ wheel, onExpire: () => {} });
      publishTimerSetExpire(set as TimerSet<unknown, unknown>, 'burn', 1);
      expect(messages).toEqual([{ timerSet: set, key: 'burn', stacksLeft: 1 }]);
      expect(timerSetExpireChannel.hasSubscribers).toBe(true);
      wheel.close();
    });
  });
});
