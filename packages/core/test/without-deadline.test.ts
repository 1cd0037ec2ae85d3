import { describe, expect, it } from 'vitest';
import {
  createDeadline,
  currentDeadline,
  ManualClock,
  TimingWheel,
  withDeadline,
  withoutDeadline,
} from '../src/index.js';

function manualWheel() {
  const clock = new ManualClock(0);
  return { clock, wheel: new TimingWheel({ clock }) };
}

describe('withoutDeadline', () => {
  it('runs fn with no ambient deadline, and returns its result', () => {
    const { wheel } = manualWheel();
    withDeadline(
      100,
      () => {
        expect(currentDeadline()).toBeDefined();
        expect(withoutDeadline(() => currentDeadline())).toBeUndefined();
        expect(withoutDeadline(() => 42)).toBe(42);
        expect(currentDeadline()!.expiresAt).toBe(100);
      },
      { wheel },
    );
  });

  it('keeps the async work started inside free of the outer deadline, after it expires', async () => {
    const { clock, wheel } = manualWheel();
    let background: Promise<unknown> | undefined;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await withDeadline(
      50,
      async () => {
        background = withoutDeadline(async () => {
          await gate;
          return currentDeadline();
        });
        await Promise.resolve();
      },
      { wheel },
    );
    clock.advance(60);
    release();
    expect(await background).toBeUndefined();
  });

  it('is not aborted with the outer deadline: a deadline made inside starts a fresh budget', () => {
    const { clock, wheel } = manualWheel();
    const outer = createDeadline(10, { wheel });
    let inner: ReturnType<typeof createDeadline> | undefined;
    outer.run(() => withoutDeadline(() => (inner = createDeadline(1_000, { wheel }))));
    expect(inner!.expiresAt).toBe(1_000);
    outer.abort();
    expect(inner!.signal.aborted).toBe(false);
    clock.advance(20);
    expect(outer.signal.aborted).toBe(true);
    expect(inner!.signal.aborted).toBe(false);
    inner!.dispose();
  });

  it('lets withDeadline nest inside it as usual', () => {
    const { wheel } = manualWheel();
    withDeadline(
      10,
      () => withoutDeadline(() => withDeadline(500, () => expect(currentDeadline()!.expiresAt).toBe(500), { wheel })),
      { wheel },
    );
  });

  it('restores the outer deadline after fn throws', () => {
    const { wheel } = manualWheel();
    withDeadline(
      100,
      () => {
        const outer = currentDeadline();
        expect(() =>
          withoutDeadline(() => {
            throw new Error('boom');
          }),
        ).toThrow('boom');
        expect(currentDeadline()).toBe(outer);
      },
      { wheel },
    );
  });

  it('refuses a non-function', () => {
    expect(() => withoutDeadline(5 as unknown as () => void)).toThrow(TypeError);
    expect(() => withoutDeadline(5 as unknown as () => void)).toThrow(/fn/);
  });
});
