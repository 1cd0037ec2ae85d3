/**
 * Host: what a silence watch needs from the runtime (a monotonic clock, one-shot timers, the page's visibility).
 *
 * The watch takes these through one seam so that its tests drive a fake clock and a fake
 * document; {@link globalHost} is the real one, read from `globalThis` when a watch starts.
 */

/** The part of `document` the watch uses: whether the page is shown, and when that changes. */
export interface VisibilitySource {
  readonly visibilityState: string;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

/** See the module comment. */
export interface Host {
  /**
   * Monotonic milliseconds: `performance.now()`. Unlike `Date.now()` it does not jump with the
   * wall clock, and it keeps counting while timers are throttled or the page is frozen, which is
   * how a late timer knows that it is late.
   */
  now(): number;
  /** A one-shot timer; the returned token goes to `clearTimer`. */
  setTimer(callback: () => void, delayMs: number): unknown;
  clearTimer(token: unknown): void;
  /** The page's document; undefined where there is none (a worker, Node, Deno, Bun). */
  readonly document: VisibilitySource | undefined;
}

/** The runtime's own clock, timers and document. */
export function globalHost(): Host {
  const scope = globalThis as { document?: Partial<VisibilitySource> };
  const doc = scope.document;
  return {
    now: () => performance.now(),
    setTimer(callback, delayMs) {
      const token = setTimeout(callback, delayMs) as unknown as { unref?: () => void };
      // Node and Bun: an open socket keeps the process alive by itself; its watch never does.
      if (typeof token === 'object' && token !== null && typeof token.unref === 'function') token.unref();
      return token;
    },
    clearTimer: (token) => clearTimeout(token as Parameters<typeof clearTimeout>[0]),
    document:
      doc !== undefined && typeof doc.visibilityState === 'string' && typeof doc.addEventListener === 'function'
        ? (doc as VisibilitySource)
        : undefined,
  };
}
