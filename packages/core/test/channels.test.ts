import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  captureContext,
  type ContextCarrier,
  publishCallbackError,
  publishTimerSetExpire,
  publishWake,
  timerSetExpireChannel,
  wakeChannel,
} from '../src/channels.js';
import {
  CORE_CALLBACK_ERROR_CHANNEL,
  CORE_CAPTURE_CONTEXT_CHANNEL,
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
    it('asks nobody while the timeout channel has no subscriber', () => {
      const carriers = subscribe(CORE_CAPTURE_CONTEXT_CHANNEL);
      expect(wakeChannel.hasSubscribers).toBe(false);
      expect(captureContext(wakeChannel)).toBeUndefined();
      expect(carriers).toEqual([]);
    });

    it('is undefined while nobody subscribes to tickwheel:core:capture-context', () => {
      subscribe(CORE_WAKE_CHANNEL);
      expect(captureContext(wakeChannel)).toBeUndefined();
    });

    it("returns what a capture-context subscriber stored for the caller's context", () => {
      subscribe(CORE_WAKE_CHANNEL);
      const store = new AsyncLocalStorage<string>();
      const capture = (carrier: unknown) => {
        (carrier as ContextCarrier).context = store.getStore();
      };
      diagnosticsChannel.subscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture);
      stops.push(() => diagnosticsChannel.unsubscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture));
      expect(store.run('request 7', () => captureContext(wakeChannel))).toBe('request 7');
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

  describe('published by the wheel and TimerSet (plain diagnostics_channel subscribers)', () => {
    it('publishes each wake-up: how late, how many fired, how long they ran, what is left', () => {
      const messages = subscribe(CORE_WAKE_CHANNEL) as Array<{
        lateMs: number;
        fired: number;
        callbackMs: number;
        pending: number;
      }>;
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      wheel.schedule(10, () => {});
      wheel.schedule(10, () => {});
      wheel.schedule(500, () => {});
      clock.advance(25); // a ManualClock steps to each armed time: never late
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({ wheel, lateMs: 0, fired: 2, pending: 1 });
      expect(messages[0].callbackMs).toBeGreaterThanOrEqual(0);
      wheel.close();
    });

    it('times the callbacks of a wake-up', () => {
      const messages = subscribe(CORE_WAKE_CHANNEL) as Array<{ callbackMs: number }>;
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      wheel.schedule(1, () => {
        const until = performance.now() + 5;
        while (performance.now() < until); // a callback that keeps the pass busy for 5 ms
      });
      clock.advance(1);
      expect(messages[0].callbackMs).toBeGreaterThanOrEqual(5);
      wheel.close();
    });

    it('publishes the real lateness of a wake-up on the system clock', async () => {
      const messages = subscribe(CORE_WAKE_CHANNEL) as Array<{ lateMs: number; fired: number }>;
      const wheel = new TimingWheel();
      const fired = new Promise<void>((resolve) => wheel.schedule(5, () => resolve()));
      const blockedUntil = performance.now() + 30;
      while (performance.now() < blockedUntil); // the event loop is blocked past the timer's time
      await fired;
      expect(messages).toHaveLength(1);
      expect(messages[0].fired).toBe(1);
      expect(messages[0].lateMs).toBeGreaterThanOrEqual(20);
      wheel.close();
    });

    it('publishes nothing and measures nothing while nobody listens', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const now = vi.spyOn(performance, 'now');
      wheel.schedule(1, () => {});
      clock.advance(1);
      expect(now).not.toHaveBeenCalled();
      now.mockRestore();
      wheel.close();
    });

    it('publishes a throwing callback before onError sees it', () => {
      const messages = subscribe(CORE_CALLBACK_ERROR_CHANNEL);
      const order: string[] = [];
      const inOrder = () => order.push('channel');
      diagnosticsChannel.subscribe(CORE_CALLBACK_ERROR_CHANNEL, inOrder);
      stops.push(() => diagnosticsChannel.unsubscribe(CORE_CALLBACK_ERROR_CHANNEL, inOrder));
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock, onError: () => order.push('onError') });
      const error = new Error('boom');
      const handle = wheel.schedule(1, () => {
        throw error;
      });
      clock.advance(1);
      expect(messages).toEqual([{ wheel, error, handle }]);
      expect(order).toEqual(['channel', 'onError']);
      wheel.close();
    });

    it('publishes each TimerSet expiry with the stacks left, before onExpire', () => {
      const messages = subscribe(CORE_TIMER_SET_EXPIRE_CHANNEL);
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const seenInOnExpire: number[] = [];
      const set = new TimerSet<string, string>({ wheel, onExpire: () => seenInOnExpire.push(messages.length) });
      set.set('poison', 10, 'dot', { policy: 'stack' });
      set.set('poison', 20, 'dot', { policy: 'stack' });
      clock.advance(10);
      clock.advance(10);
      expect(messages).toEqual([
        { timerSet: set, key: 'poison', stacksLeft: 1 },
        { timerSet: set, key: 'poison', stacksLeft: 0 },
      ]);
      expect(seenInOnExpire).toEqual([1, 2]);
      wheel.close();
    });
  });
});
