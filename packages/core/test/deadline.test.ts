import { describe, expect, it } from 'vitest';
import { createDeadline, currentDeadline, ManualClock, TimingWheel, withDeadline } from '../src/index.js';
import { expectUnknownKey } from '../../../tests/helpers/bad-options.js';
import { enableAmbientDeadlines, ownedDeadline, type DeadlineOwner, type DrivingClock } from '../src/internal.js';

function manualWheel() {
  const clock = new ManualClock(0);
  return { clock, wheel: new TimingWheel({ clock }) };
}

describe('deadline', () => {
  describe('#source, #budgetMs, #startedAt', () => {
    it("names withDeadline, createDeadline and an owner's source, with the whole budget and its start", () => {
      const { clock, wheel } = manualWheel();
      clock.advance(10);
      withDeadline(
        300,
        () => {
          const d = currentDeadline()!;
          expect([d.source, d.budgetMs, d.startedAt, d.expiresAt]).toEqual(['withDeadline', 300, 10, 310]);
        },
        { wheel },
      );
      const created = createDeadline(40, { wheel });
      expect([created.source, created.budgetMs, created.startedAt]).toEqual(['createDeadline', 40, 10]);
      created.dispose();
      const owned = ownedDeadline(70, wheel, { deadlineAborted() {} }, false, 'grpc');
      expect([owned.source, owned.budgetMs]).toEqual(['grpc', 70]);
      owned.dispose();
    });

    it("takes the enclosing deadline's source and budget when that one is earlier", () => {
      const { clock, wheel } = manualWheel();
      const outer = ownedDeadline(1000, wheel, { deadlineAborted() {} }, false, 'header:grpc-timeout');
      outer.run(() => {
        clock.advance(600);
        withDeadline(5000, () => {
          const d = currentDeadline()!;
          expect([d.source, d.budgetMs, d.startedAt, d.remaining()]).toEqual(['header:grpc-timeout', 1000, 0, 400]);
        });
        withDeadline(100, () => expect(currentDeadline()!.source).toBe('withDeadline'));
      });
      outer.dispose();
    });
  });

  describe('withDeadline', () => {
    it('makes the deadline ambient inside fn, including after awaits', async () => {
      const { clock, wheel } = manualWheel();
      expect(currentDeadline()).toBeUndefined();
      await withDeadline(
        100,
        async () => {
          const d = currentDeadline()!;
          expect(d.expiresAt).toBe(100);
          clock.advance(30);
          await Promise.resolve();
          expect(currentDeadline()).toBe(d);
          expect(d.remaining()).toBe(70);
        },
        { wheel },
      );
      expect(currentDeadline()).toBeUndefined();
    });

    it('takes the earlier of nested deadlines', () => {
      const { wheel } = manualWheel();
      withDeadline(
        50,
        () => {
          withDeadline(500, () => expect(currentDeadline()!.expiresAt).toBe(50));
          withDeadline(20, () => expect(currentDeadline()!.expiresAt).toBe(20));
        },
        { wheel },
      );
    });

    it('aborts the signal with a TimeoutError when the deadline passes', async () => {
      const { clock, wheel } = manualWheel();
      let signal: AbortSignal | undefined;
      const work = withDeadline(
        40,
        () =>
          new Promise<void>((resolve) => {
            signal = currentDeadline()!.signal;
            signal.addEventListener('abort', () => resolve());
          }),
        { wheel },
      );
      clock.advance(39);
      expect(signal!.aborted).toBe(false);
      clock.advance(1);
      await work;
      expect(signal!.aborted).toBe(true);
      expect((signal!.reason as DOMException).name).toBe('TimeoutError');
    });

    it('aborts an inner deadline when the outer one expires', () => {
      const { clock, wheel } = manualWheel();
      let inner: AbortSignal | undefined;
      const pending = withDeadline(
        10,
        () =>
          withDeadline(1000, () => {
            inner = currentDeadline()!.signal;
            return new Promise(() => undefined);
          }),
        { wheel },
      );
      void pending;
      clock.advance(10);
      expect(inner!.aborted).toBe(true);
    });

    it('follows a linked signal, with its reason', () => {
      const { wheel } = manualWheel();
      const controller = new AbortController();
      let signal: AbortSignal | undefined;
      void withDeadline(
        1000,
        () => {
          signal = currentDeadline()!.signal;
          return new Promise(() => undefined);
        },
        { wheel, signal: controller.signal },
      );
      controller.abort(new Error('client cancelled'));
      expect(signal!.aborted).toBe(true);
      expect((signal!.reason as Error).message).toBe('client cancelled');
    });

    it('releases its timer when fn settles, so the wheel is empty again', async () => {
      const { wheel } = manualWheel();
      await withDeadline(
        1000,
        () => {
          expect(wheel.size).toBe(1);
          return Promise.resolve();
        },
        { wheel },
      );
      expect(wheel.size).toBe(0);
      withDeadline(1000, () => 'sync', { wheel });
      expect(wheel.size).toBe(0);
      expect(() =>
        withDeadline(
          1000,
          () => {
            throw new Error('x');
          },
          { wheel },
        ),
      ).toThrow('x');
      expect(wheel.size).toBe(0);
    });

    it('rejects a bad timeout or fn', () => {
      expect(() => withDeadline(-1, () => undefined)).toThrow(/timeoutMs must be a finite number >= 0, got -1/);
      expect(() => withDeadline(Number.NaN, () => undefined)).toThrow(RangeError);
      expect(() => withDeadline(10, null as never)).toThrow(/fn must be a function/);
    });

    it('gives an already-spent budget an aborted signal at once', () => {
      const { wheel } = manualWheel();
      withDeadline(
        0,
        () => {
          expect(currentDeadline()!.signal.aborted).toBe(true);
          expect(currentDeadline()!.remaining()).toBe(0);
        },
        { wheel },
      );
    });
  });

  describe('createDeadline', () => {
    it('aborts on demand, with its nested deadlines, and without a listener per child', () => {
      const { wheel } = manualWheel();
      const scope = createDeadline(1000, { wheel });
      const children = scope.run(() => Array.from({ length: 50 }, () => createDeadline(500)));
      const cancelled = new Error('client cancelled');
      scope.abort(cancelled);
      scope.abort(new Error('again'));
      expect(scope.signal.reason).toBe(cancelled);
      for (const child of children) {
        expect(child.signal.aborted).toBe(true);
        expect(child.signal.reason).toBe(cancelled);
      }
      for (const child of children) child.dispose();
      expect(wheel.size).toBe(0);
    });

    it('calls onAbort once, before its signal and its nested deadlines abort', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      const scope = createDeadline(100, {
        wheel,
        onAbort: (reason) => order.push(`owner:${(reason as DOMException).name}`),
      });
      scope.signal.addEventListener('abort', () => order.push('signal'));
      const child = scope.run(() => createDeadline(1000, { onAbort: () => order.push('child') }));
      clock.advance(100);
      scope.abort();
      expect(order).toEqual(['owner:TimeoutError', 'signal', 'child']);
      expect(child.signal.aborted).toBe(true);
      expect(() => createDeadline(10, { wheel, onAbort: 5 as never })).toThrow(/onAbort must be a function, got 5/);
      expectUnknownKey(
        () => createDeadline(10, { wheel, onabort: () => undefined } as never),
        '@tickwheel/core',
        'onabort',
      );
      expectUnknownKey(
        () => withDeadline(10, () => undefined, { timeoutMs: 5 } as never),
        '@tickwheel/core',
        'timeoutMs',
      );
      expect(() => createDeadline(10, 5 as never)).toThrow('@tickwheel/core: options must be an object, got 5');
    });

    it('calls onAbort during creation when the budget is already spent', () => {
      const { wheel } = manualWheel();
      const reasons: unknown[] = [];
      const scope = createDeadline(0, { wheel, onAbort: (reason) => reasons.push(reason) });
      expect(reasons).toHaveLength(1);
      expect(scope.signal.reason).toBe(reasons[0]);
    });

    it('gives a disposed nested deadline no further aborts from its parent', () => {
      const { clock, wheel } = manualWheel();
      const scope = createDeadline(100, { wheel });
      const child = scope.run(() => createDeadline(1000));
      child.dispose();
      clock.advance(100);
      expect(scope.signal.aborted).toBe(true);
      expect(child.signal.aborted).toBe(false);
    });

    it('lives until disposed, and run() can enter it repeatedly', () => {
      const { clock, wheel } = manualWheel();
      const scope = createDeadline(100, { wheel });
      scope.run(() => expect(currentDeadline()).toBe(scope));
      expect(currentDeadline()).toBeUndefined();
      clock.advance(50);
      scope.run(() => expect(currentDeadline()!.remaining()).toBe(50));
      scope.dispose();
      scope.dispose();
      expect(wheel.size).toBe(0);
      clock.advance(100);
      expect(scope.signal.aborted).toBe(false);
    });
  });

  describe('ownedDeadline (core/internal)', () => {
    /** An owner that logs its calls, with `this` checked. */
    function owner(order: string[]): DeadlineOwner {
      const self: DeadlineOwner = {
        deadlineAborted(this: DeadlineOwner, reason) {
          expect(this).toBe(self);
          order.push(`owner:${(reason as DOMException | Error).name}`);
        },
      };
      return self;
    }

    it('lets its timer keep the process alive only when asked (keepAlive), unlike every other deadline', () => {
      const refs: boolean[] = [];
      const clock: DrivingClock = {
        now: () => 0,
        createDriver: () => ({
          arm: () => undefined,
          disarm: () => undefined,
          setRef: (ref) => refs.push(ref),
          close: () => undefined,
        }),
      };
      const wheel = new TimingWheel({ clock });
      const kept = ownedDeadline(100, wheel, owner([]), true);
      expect(refs).toEqual([]); // every pending timer ref'ed: nothing to tell the driver
      const unrefed = ownedDeadline(100, wheel, owner([]));
      kept.dispose();
      expect(refs).toEqual([false]); // only the unref'ed one is left
      unrefed.dispose();
      wheel.close();
    });

    it('tells its owner once, before its signal and its nested deadlines abort', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      const scope = ownedDeadline(100, wheel, owner(order));
      scope.signal.addEventListener('abort', () => order.push('signal'));
      const child = scope.run(() => createDeadline(1000, { onAbort: () => order.push('child') }));
      expect(scope.expiresAt).toBe(100);
      clock.advance(99);
      expect(order).toEqual([]);
      clock.advance(1);
      scope.abort();
      expect(order).toEqual(['owner:TimeoutError', 'signal', 'child']);
      expect(child.signal.aborted).toBe(true);
      expect(wheel.size).toBe(0);
    });

    it('passes a cancel reason to the owner, and tells it nothing after dispose', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      const cancelled = ownedDeadline(100, wheel, owner(order));
      cancelled.abort(new Error('client cancelled'));
      const disposed = ownedDeadline(100, wheel, owner(order));
      disposed.dispose();
      clock.advance(200);
      expect(order).toEqual(['owner:Error']);
      expect(wheel.size).toBe(0);
    });

    it('nests in the ambient deadline and takes the earlier expiry, like createDeadline', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      const outer = createDeadline(50, { wheel });
      const scope = outer.run(() => ownedDeadline(1000, undefined, owner(order)));
      expect(scope.wheel).toBe(wheel);
      expect(scope.expiresAt).toBe(50);
      clock.advance(50);
      expect(order).toEqual(['owner:TimeoutError']);
    });

    it('tells its owner during creation when the budget is already spent, and checks timeoutMs', () => {
      const { wheel } = manualWheel();
      const order: string[] = [];
      const scope = ownedDeadline(0, wheel, owner(order));
      expect(order).toEqual(['owner:TimeoutError']);
      expect(scope.signal.aborted).toBe(true);
      expect(() => ownedDeadline(-1, wheel, owner(order))).toThrow(/timeoutMs/);
    });
  });

  it('times out on a wheel of another copy of core, which has no timer-task path', () => {
    const { clock, wheel } = manualWheel();
    Object.defineProperty(wheel, '_scheduleTask', { value: undefined });
    Object.defineProperty(wheel, '_scheduleTaskAt', { value: undefined });
    const reasons: unknown[] = [];
    createDeadline(30, { wheel, onAbort: (reason) => reasons.push(reason) });
    const outer = createDeadline(10, { wheel });
    const nested = outer.run(() => createDeadline(20)); // the parent's expiry wins: scheduleAt
    clock.advance(10);
    expect(nested.signal.aborted).toBe(true);
    clock.advance(20);
    expect(reasons).toHaveLength(1);
    expect(wheel.size).toBe(0);
  });

  it('enableAmbientDeadlines (core/internal) changes no ambient deadline, inside one or outside, and can repeat', async () => {
    const { clock, wheel } = manualWheel();
    enableAmbientDeadlines();
    expect(currentDeadline()).toBeUndefined();
    await withDeadline(
      100,
      async () => {
        const d = currentDeadline()!;
        enableAmbientDeadlines();
        expect(currentDeadline()).toBe(d);
        await Promise.resolve();
        expect(currentDeadline()).toBe(d);
        clock.advance(100);
        expect(d.signal.aborted).toBe(true);
      },
      { wheel },
    );
    enableAmbientDeadlines();
    expect(currentDeadline()).toBeUndefined();
  });
});
