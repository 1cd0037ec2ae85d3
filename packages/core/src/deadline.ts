/**
 * Ambient deadlines: `withDeadline`, `currentDeadline`, `createDeadline` on an AsyncLocalStorage, timed by a wheel.
 * Must not depend on: any adapter package or the library an adapter wraps (the wheel and the clock only).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { sharedWheel } from './shared-wheel.js';
import type { TimerHandle } from './timer-handle.js';
import type { TimingWheel } from './timing-wheel.js';
import { describeValue, requireFunction, requireMs } from './options-kit.js';

/**
 * An ambient deadline: how long the current unit of work (a request, an RPC handler) has left.
 * Adapters read it with {@link currentDeadline} so that outgoing calls made inside inherit the
 * remaining budget with no extra code: a gRPC handler's deadline flows into the fetch calls and
 * gRPC calls it makes.
 */
export interface Deadline {
  /** When the budget runs out, in the wheel clock's milliseconds. */
  readonly expiresAt: number;
  /** Milliseconds left, 0 once expired. */
  remaining(): number;
  /**
   * Aborts when the deadline passes (reason: a `DOMException` named `TimeoutError`, as from
   * `AbortSignal.timeout`) or when a linked parent signal aborts (with the parent's reason).
   */
  readonly signal: AbortSignal;
  /** The wheel whose clock `expiresAt` is read on. */
  readonly wheel: TimingWheel;
}

/** Options of {@link createDeadline} and {@link withDeadline}. */
export interface DeadlineOptions {
  /** The wheel that times the deadline (and whose clock it reads). Default: {@link sharedWheel}. */
  wheel?: TimingWheel;
  /** A signal whose abort also aborts this deadline's signal, such as a client's cancellation. */
  signal?: AbortSignal;
  /**
   * Called once, synchronously, when the deadline aborts (it passed, a parent or linked signal
   * aborted, or `abort()` was called), before its signal aborts and before nested deadlines do.
   * An owner that must act first (a server sending its status) uses this instead of listening
   * to `signal`, which would create the AbortController that deadlines otherwise never need.
   */
  onAbort?: (reason: unknown) => void;
}

/** A deadline you own: run work inside it, and dispose it when the work is over. */
export interface DeadlineScope extends Deadline, Disposable {
  /** Runs `fn` with this deadline as the ambient {@link currentDeadline}. */
  run<T>(fn: () => T): T;
  /**
   * Aborts the deadline now (its signal and every deadline nested in it) with `reason`, by
   * default a `TimeoutError`; a server calls this when its client cancels. Idempotent.
   */
  abort(reason?: unknown): void;
  /** Cancels the deadline's timer and listeners. The signal no longer aborts afterwards. Idempotent. */
  dispose(): void;
}

/**
 * The ambient store lives on `globalThis` under a registered symbol, like the shared wheel, so
 * that with two copies of this package in one process a deadline set through one copy bounds
 * work timed through the other.
 */
const STORAGE_KEY = Symbol.for('@tickwheel/core.deadlineStorage@0');
type GlobalWithStorage = typeof globalThis & { [STORAGE_KEY]?: AsyncLocalStorage<Deadline> };
const storage = ((globalThis as GlobalWithStorage)[STORAGE_KEY] ??= new AsyncLocalStorage<Deadline>());

/**
 * The ambient deadline of the current async context, or `undefined` outside any.
 *
 * @example
 * ```ts
 * const budget = currentDeadline()?.remaining() ?? 5_000;
 * ```
 */
export function currentDeadline(): Deadline | undefined {
  return storage.getStore();
}

/** The `TimeoutError` a deadline's signal aborts with, matching `AbortSignal.timeout()`. */
export function deadlineExceededReason(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

/**
 * Creates a deadline `timeoutMs` from now, nested in the ambient one: when the ambient deadline
 * is earlier it wins, and its abort aborts this one too. The deadline holds one timer on the
 * wheel until {@link DeadlineScope.dispose}; servers create one per request and dispose it
 * when the response is sent. Like `wheel.schedule` it counts from the job's clock reading (call
 * `freshNow(wheel.clock)` first to renew it), and a `timeoutMs` above `MAX_DELAY_MS` (2^53)
 * gives a deadline that never passes.
 *
 * @throws RangeError/TypeError for a bad `timeoutMs` or options
 */
export function createDeadline(timeoutMs: number, options: DeadlineOptions = {}): DeadlineScope {
  requireMs(timeoutMs, 'timeoutMs');
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${describeValue(options)}`);
  }
  const parent = storage.getStore();
  const wheel = options.wheel ?? parent?.wheel ?? sharedWheel();
  const ownExpiresAt = wheel.clock.now() + timeoutMs;
  const parentWins = parent !== undefined && parent.wheel.clock === wheel.clock && parent.expiresAt < ownExpiresAt;
  const onAbort =
    options.onAbort === undefined ? undefined : requireFunction<(reason: unknown) => void>(options.onAbort, 'onAbort');
  // Its own timeout goes through schedule(), so that the same MAX_DELAY_MS rule applies exactly.
  return new Scope(
    wheel,
    parentWins ? parent.expiresAt : ownExpiresAt,
    parentWins ? undefined : timeoutMs,
    parent,
    options.signal,
    onAbort,
  );
}

/**
 * Runs `fn` with an ambient deadline `timeoutMs` from now (the earlier of it and any enclosing
 * deadline). The deadline is released when `fn` returns, or when its promise settles.
 *
 * @example
 * ```ts
 * await withDeadline(2_000, async () => {
 *   const res = await timedFetch('http://127.0.0.1:8080/slow'); // gets at most the 2 s left
 *   currentDeadline()!.signal.throwIfAborted();
 * });
 * ```
 */
export function withDeadline<T>(timeoutMs: number, fn: () => T, options?: DeadlineOptions): T {
  requireFunction(fn, 'fn');
  const scope = createDeadline(timeoutMs, options);
  let result: T;
  try {
    result = scope.run(fn);
  } catch (error) {
    scope.dispose();
    throw error;
  }
  if (isPromiseLike(result)) {
    result.then(
      () => scope.dispose(),
      () => scope.dispose(),
    );
  } else {
    scope.dispose();
  }
  return result;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/**
 * A deadline's state. The AbortController behind `signal` is created only when someone reads
 * `signal` (about 1 KB and a few µs each), since most deadlines are disposed without anybody
 * listening. Nested deadlines register with their parent scope directly rather than as event
 * listeners on its signal, so any number of them can hang off one request.
 */
class Scope implements DeadlineScope {
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;
  private timer: TimerHandle | undefined;
  private children: Set<Scope> | undefined;
  private unlinks: Array<() => void> | undefined;

  constructor(
    readonly wheel: TimingWheel,
    readonly expiresAt: number,
    ownTimeoutMs: number | undefined,
    parent: Deadline | undefined,
    signal: AbortSignal | undefined,
    private readonly onAbort: ((reason: unknown) => void) | undefined,
  ) {
    if (parent instanceof Scope) {
      if (parent.aborted) this.abort(parent.abortReason);
      else this.nestIn(parent);
    } else if (parent !== undefined) {
      this.follow(parent.signal);
    }
    if (signal !== undefined && !this.aborted) this.follow(signal);
    if (this.aborted) return;
    if (wheel.clock.now() >= expiresAt) {
      this.abort(deadlineExceededReason());
    } else {
      // A bound method, not an arrow: an arrow would make this constructor allocate a context
      // for `this` on every call and keep it with the timer (a pending deadline took 88 B for
      // the arrow and its context, 48 B bound; heap snapshot of 1,000 gRPC calls in flight).
      const onTimeout = this.timedOut.bind(this);
      this.timer =
        ownTimeoutMs === undefined ? wheel.scheduleAt(expiresAt, onTimeout) : wheel.schedule(ownTimeoutMs, onTimeout);
      // A deadline alone never holds the process open; the work it bounds does that.
      this.timer.unref();
    }
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  remaining(): number {
    const left = this.expiresAt - this.wheel.clock.now();
    return left > 0 ? left : 0;
  }

  run<T>(fn: () => T): T {
    return storage.run(this, fn);
  }

  abort(reason: unknown = deadlineExceededReason()): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.onAbort?.(reason);
    this.controller?.abort(reason);
    if (this.children !== undefined) for (const child of [...this.children]) child.abort(reason);
    this.dispose();
  }

  dispose(): void {
    this.timer?.cancel();
    this.timer = undefined;
    const unlinks = this.unlinks;
    this.unlinks = undefined;
    if (unlinks !== undefined) for (const unlink of unlinks) unlink();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  private timedOut(): void {
    this.abort(deadlineExceededReason());
  }

  /** Registers with an enclosing scope, which aborts its children directly. */
  private nestIn(parent: Scope): void {
    (parent.children ??= new Set()).add(this);
    this.onDispose(() => parent.children!.delete(this));
  }

  private follow(signal: AbortSignal): void {
    if (signal.aborted) {
      this.abort(signal.reason);
      return;
    }
    const onAbort = (): void => this.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.onDispose(() => signal.removeEventListener('abort', onAbort));
  }

  private onDispose(unlink: () => void): void {
    (this.unlinks ??= []).push(unlink);
  }
}
