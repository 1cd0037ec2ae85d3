/**
 * Ambient deadlines: `withDeadline`, `currentDeadline`, `createDeadline` on an AsyncLocalStorage, timed by a wheel.
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
import { AsyncLocalStorage } from 'node:async_hooks';
import { sharedWheel } from '../wheel/shared-wheel.js';
import type { TimerHandle, TimerTask } from '../wheel/timer-handle.js';
import { scheduleTask, scheduleTaskAt } from '../wheel/timer-task.js';
import type { TimingWheel } from '../wheel/timing-wheel.js';
import { optionChecks, requireFunction, requireMs } from '../kit/options-kit.js';

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

const core = optionChecks('@tickwheel/core');
/** The keys {@link createDeadline} knows; any other is refused. */
const DEADLINE_OPTIONS: readonly (keyof DeadlineOptions)[] = ['wheel', 'signal', 'onAbort'];

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
 * Switches the ambient store on now rather than at the first deadline's `run()`. On
 * Node 20 and 22 an enabled AsyncLocalStorage adds its slot to every async resource made from
 * then on; a class whose instances V8 has already sized (after its first few) gets the slot in
 * an out-of-object property array instead, which costs more per object (the AsyncResource of
 * each in-flight gRPC client stream is such an object). A server interceptor, which
 * will enter deadlines on its first call anyway, calls this when it is made. Idempotent; it
 * changes no deadline and `currentDeadline()` stays as it was. Not public API.
 */
export function enableAmbientDeadlines(): void {
  // run() switches the store on unless the store given is the current one (`undefined` outside any).
  if (storage.getStore() === undefined) storage.run(ENABLING, noop);
}

/**
 * Makes `deadline` (`undefined`: none) the ambient deadline for the rest of the current
 * synchronous run and the async work started from it: AsyncLocalStorage's `enterWith`. For an
 * adapter whose handler runs in listeners it does not call: node:http emits `'request'` to every
 * listener in turn, and the HTTP adapter's listener, prepended, enters the request's deadline so
 * that the listeners after it (the user's) run inside it, with no wrapper of theirs. Not public
 * API (`@tickwheel/core/internal`).
 */
export function enterDeadline(deadline: Deadline | undefined): void {
  storage.enterWith(deadline as Deadline);
}

/** The store `enableAmbientDeadlines` runs nothing under. */
const ENABLING = null as unknown as Deadline;
function noop(): void {}

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
  core.object(options, 'options', DEADLINE_OPTIONS);
  const onAbort =
    options.onAbort === undefined ? undefined : requireFunction<(reason: unknown) => void>(options.onAbort, 'onAbort');
  return newScope(timeoutMs, options.wheel, options.signal, onAbort);
}

/**
 * Told by a method call when a deadline from {@link ownedDeadline} aborts: what
 * `onAbort` is for {@link createDeadline}, without a bound function per deadline.
 */
export interface DeadlineOwner {
  deadlineAborted(reason: unknown): void;
}

/**
 * {@link createDeadline} for a per-request owner (the gRPC server's call) that wants
 * to hear of the abort first: `owner.deadlineAborted(reason)` is called where `onAbort` would be.
 * A method call needs no bound `onAbort` per request, held while the request is in flight. Not
 * public API (`@tickwheel/core/internal`).
 *
 * @param keepAlive - let the deadline's timer keep the process alive, for an owner whose request
 *   does so anyway while the deadline runs (an open server call). A wheel whose pending timers
 *   are all ref'ed skips its keep-alive bookkeeping, and one timer scheduled ref'ed and then
 *   unref'ed makes it flip its native timer's state at the end of the job, per request.
 * @throws RangeError/TypeError for a bad `timeoutMs`
 */
export function ownedDeadline(
  timeoutMs: number,
  wheel: TimingWheel | undefined,
  owner: DeadlineOwner,
  keepAlive = false,
): DeadlineScope {
  requireMs(timeoutMs, 'timeoutMs');
  return newScope(timeoutMs, wheel, undefined, owner, keepAlive);
}

/** Works out a new scope's wheel and expiry from the ambient deadline, and makes it. */
function newScope(
  timeoutMs: number,
  wheelOption: TimingWheel | undefined,
  signal: AbortSignal | undefined,
  onAbort: AbortHook | undefined,
  keepAlive = false,
): Scope {
  const parent = storage.getStore();
  const wheel = wheelOption ?? parent?.wheel ?? sharedWheel();
  const ownExpiresAt = wheel.clock.now() + timeoutMs;
  const parentWins = parent !== undefined && parent.wheel.clock === wheel.clock && parent.expiresAt < ownExpiresAt;
  // Its own timeout goes through schedule(), so that the same MAX_DELAY_MS rule applies exactly.
  return new Scope(
    wheel,
    parentWins ? parent.expiresAt : ownExpiresAt,
    parentWins ? undefined : timeoutMs,
    parent,
    signal,
    onAbort,
    keepAlive,
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

/**
 * Runs `fn` with no ambient deadline: inside it, and in all the async work it starts,
 * {@link currentDeadline} is `undefined`, so the gRPC calls and fetches made there are not
 * bounded by an enclosing deadline (nor cancelled with it). For work a handler starts but that
 * must outlive its request: a cache refresh, an audit write. Limits of its own still apply, and
 * `withDeadline` inside it starts a fresh budget.
 *
 * @example
 * ```ts
 * // Inside a handler: answer now, refresh the cache in the background with its own 30 s.
 * withoutDeadline(() => withDeadline(30_000, () => refreshCache(key))).catch(logError);
 * ```
 */
export function withoutDeadline<T>(fn: () => T): T {
  requireFunction(fn, 'fn');
  // run(undefined) rather than exit(): the same effect, without exit()'s experimental status.
  return storage.run(undefined as unknown as Deadline, fn);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/** Who hears of an abort first: the `onAbort` option, or an owner's method ({@link ownedDeadline}). */
type AbortHook = ((reason: unknown) => void) | DeadlineOwner;

/** What `abortReason` holds until the scope aborts (`undefined` is a valid reason). */
const NOT_ABORTED: unknown = Symbol('not aborted');

/** What only some scopes need: a signal someone read, nested scopes, listeners to undo. */
interface ScopeLinks {
  controller: AbortController | undefined;
  children: Set<Scope> | undefined;
  unlinks: Array<() => void> | undefined;
}

/**
 * A deadline's state. The AbortController behind `signal` is created only when someone reads
 * `signal` (about 1 KB and a few µs each), since most deadlines are disposed without anybody
 * listening. Nested deadlines register with their parent scope directly rather than as event
 * listeners on its signal, so any number of them can hang off one request.
 *
 * What a pending deadline holds is kept small, since a server holds one per request in flight:
 * the scope is its timer's task (the wheel calls `timerFired`, no bound method), its
 * owner's hook is a method call (`ownedDeadline`), every field is set in the constructor so
 * that all scopes share one map with their fields in the object, and what only some scopes use
 * (a signal, nested scopes, listeners) waits in one `links` object made on first use, so that a
 * scope nobody listens to is six fields.
 */
class Scope implements DeadlineScope, TimerTask {
  readonly wheel: TimingWheel;
  readonly expiresAt: number;
  private onAbort: AbortHook | undefined;
  private timer: TimerHandle | undefined;
  /** The abort's reason once aborted, else NOT_ABORTED. */
  private abortReason: unknown;
  private links: ScopeLinks | undefined;

  constructor(
    wheel: TimingWheel,
    expiresAt: number,
    ownTimeoutMs: number | undefined,
    parent: Deadline | undefined,
    signal: AbortSignal | undefined,
    onAbort: AbortHook | undefined,
    keepAlive: boolean,
  ) {
    this.wheel = wheel;
    this.expiresAt = expiresAt;
    this.onAbort = onAbort;
    this.timer = undefined;
    this.abortReason = NOT_ABORTED;
    this.links = undefined;
    if (parent instanceof Scope) {
      if (parent.abortReason !== NOT_ABORTED) this.abort(parent.abortReason);
      else this.nestIn(parent);
    } else if (parent !== undefined) {
      this.follow(parent.signal);
    }
    if (signal !== undefined && this.abortReason === NOT_ABORTED) this.follow(signal);
    if (this.abortReason !== NOT_ABORTED) return;
    if (wheel.clock.now() >= expiresAt) {
      this.abort(deadlineExceededReason());
    } else {
      const timer =
        ownTimeoutMs === undefined ? scheduleTaskAt(wheel, expiresAt, this) : scheduleTask(wheel, ownTimeoutMs, this);
      this.timer = timer;
      // A deadline alone never holds the process open; the work it bounds does that.
      if (!keepAlive) timer.unref();
    }
  }

  get signal(): AbortSignal {
    const links = this.linked();
    if (links.controller === undefined) {
      links.controller = new AbortController();
      if (this.abortReason !== NOT_ABORTED) links.controller.abort(this.abortReason);
    }
    return links.controller.signal;
  }

  remaining(): number {
    const left = this.expiresAt - this.wheel.clock.now();
    return left > 0 ? left : 0;
  }

  run<T>(fn: () => T): T {
    return storage.run(this, fn);
  }

  abort(reason: unknown = deadlineExceededReason()): void {
    if (this.abortReason !== NOT_ABORTED) return;
    this.abortReason = reason;
    const onAbort = this.onAbort;
    if (typeof onAbort === 'function') onAbort(reason);
    else onAbort?.deadlineAborted(reason);
    const links = this.links;
    if (links !== undefined) {
      links.controller?.abort(reason);
      if (links.children !== undefined) for (const child of [...links.children]) child.abort(reason);
    }
    this.dispose();
  }

  dispose(): void {
    this.timer?.cancel();
    this.timer = undefined;
    // A disposed scope may stay ambient on a resource (an idle keep-alive connection's parser): it must not keep its owner.
    this.onAbort = undefined;
    const links = this.links;
    const unlinks = links?.unlinks;
    if (unlinks === undefined) return;
    links!.unlinks = undefined;
    for (const unlink of unlinks) unlink();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** @internal The wheel's call when the deadline passes (the scope is its timer's task). */
  timerFired(): void {
    this.abort(deadlineExceededReason());
  }

  private linked(): ScopeLinks {
    return (this.links ??= { controller: undefined, children: undefined, unlinks: undefined });
  }

  /** Registers with an enclosing scope, which aborts its children directly. */
  private nestIn(parent: Scope): void {
    const siblings = (parent.linked().children ??= new Set());
    siblings.add(this);
    this.onDispose(() => siblings.delete(this));
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
    (this.linked().unlinks ??= []).push(unlink);
  }
}
