import type { Host, VisibilitySource } from '../../src/browser/host.js';

/**
 * A page's runtime for the browser entry's unit tests: a clock that moves only when told, timers
 * that run only when told (so a test can let time pass with timers held back, as a throttled or
 * frozen page does), and a document whose visibility the test sets.
 */
export class FakePage implements Host {
  private t = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  readonly document: FakeDocument | undefined;

  constructor(options: { document?: boolean } = {}) {
    this.document = options.document === false ? undefined : new FakeDocument();
  }

  now(): number {
    return this.t;
  }

  setTimer(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + delayMs, callback });
    return id;
  }

  clearTimer(token: unknown): void {
    this.timers.delete(token as number);
  }

  /** Timers pending. */
  get pending(): number {
    return this.timers.size;
  }

  /** When the earliest pending timer is due; Infinity when none is. */
  get nextDueAt(): number {
    let at = Infinity;
    for (const timer of this.timers.values()) at = Math.min(at, timer.at);
    return at;
  }

  /** Moves the clock to `at`, running every timer due by then at its due time, in order (an awake page). */
  advanceTo(at: number): void {
    for (;;) {
      const due = this.nextDueAt;
      if (due > at) break;
      this.t = Math.max(this.t, due);
      this.runDue();
    }
    this.t = Math.max(this.t, at);
  }

  advance(ms: number): void {
    this.advanceTo(this.t + ms);
  }

  /** Moves the clock to `at` with no timer running (a frozen or suspended page, or timers held back by throttling). */
  sleepUntil(at: number): void {
    this.t = Math.max(this.t, at);
  }

  /** Runs every timer due by now, late ones included, each once (a page waking up). */
  runDue(): void {
    for (const [id, timer] of [...this.timers]) {
      if (timer.at > this.t || !this.timers.has(id)) continue;
      this.timers.delete(id);
      timer.callback();
    }
  }

  /**
   * Chromium's intensive throttling: timers run only at whole multiples of `alignMs`. Moves the
   * clock to `at`; `events` (time, action) run on time in between, as network events do in a
   * hidden page.
   */
  throttledUntil(at: number, alignMs: number, events: Array<[number, () => void]> = []): void {
    const queue = [...events].sort((a, b) => a[0] - b[0]);
    for (;;) {
      const due = this.nextDueAt;
      const wake = due === Infinity ? Infinity : Math.ceil(due / alignMs) * alignMs;
      const event = queue[0];
      if (event !== undefined && event[0] <= Math.min(wake, at)) {
        this.t = Math.max(this.t, event[0]);
        queue.shift();
        event[1]();
        continue;
      }
      if (wake > at) break;
      this.t = Math.max(this.t, wake);
      this.runDue();
    }
    this.t = Math.max(this.t, at);
  }
}

/** A document whose `visibilityState` the test sets; `show()`/`hide()` dispatch `visibilitychange`. */
export class FakeDocument extends EventTarget implements VisibilitySource {
  visibilityState: 'visible' | 'hidden' = 'visible';
  private readonly held = new Set<unknown>();

  hide(): void {
    this.visibilityState = 'hidden';
    this.dispatchEvent(new Event('visibilitychange'));
  }

  show(): void {
    this.visibilityState = 'visible';
    this.dispatchEvent(new Event('visibilitychange'));
  }

  /** `visibilitychange` listeners held. */
  get listeners(): number {
    return this.held.size;
  }

  override addEventListener(...args: Parameters<EventTarget['addEventListener']>): void {
    this.held.add(args[1]);
    super.addEventListener(...args);
  }

  override removeEventListener(...args: Parameters<EventTarget['removeEventListener']>): void {
    this.held.delete(args[1]);
    super.removeEventListener(...args);
  }
}

/**
 * A WHATWG-shaped WebSocket with no I/O: `receive()` dispatches a message event, `close()` records
 * what it was asked and moves to CLOSING, `closed()` finishes with a `'close'` event. Knows the
 * listeners it holds, by type.
 */
export class FakeWhatwgSocket extends EventTarget {
  readyState: number;
  closeCalls: Array<{ code: number | undefined; reason: string | undefined }> = [];
  private readonly held = new Map<string, Set<unknown>>();

  constructor(readyState = 1) {
    super();
    this.readyState = readyState;
  }

  receive(data: unknown): void {
    this.dispatchEvent(Object.assign(new Event('message'), { data }));
  }

  open(): void {
    this.readyState = 1;
    this.dispatchEvent(new Event('open'));
  }

  close(code?: number, reason?: string): void {
    this.closeCalls.push({ code, reason });
    if (this.readyState < 2) this.readyState = 2;
  }

  closed(): void {
    this.readyState = 3;
    this.dispatchEvent(new Event('close'));
  }

  /** Listeners held for `type`. */
  listeners(type: string): number {
    return this.held.get(type)?.size ?? 0;
  }

  /** Listeners held, over every type. */
  get listenerTotal(): number {
    let total = 0;
    for (const set of this.held.values()) total += set.size;
    return total;
  }

  override addEventListener(...args: Parameters<EventTarget['addEventListener']>): void {
    let set = this.held.get(args[0]);
    if (set === undefined) this.held.set(args[0], (set = new Set()));
    set.add(args[1]);
    super.addEventListener(...args);
  }

  override removeEventListener(...args: Parameters<EventTarget['removeEventListener']>): void {
    this.held.get(args[0])?.delete(args[1]);
    super.removeEventListener(...args);
  }
}
