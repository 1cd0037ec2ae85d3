/**
 * SilenceWatch: declares a WebSocket's server dead once nothing has arrived for silenceMs, without mistaking a throttled page for a dead server.
 *
 * # Dead servers, seen from a page
 *
 * A page cannot send or see protocol pings, so a connection whose server vanished (a dead host, a
 * cut network path) stays OPEN until TCP gives up, often for minutes. The server's `keepaliveMs`
 * sends a small text message to a connection it has sent nothing for that long; the page declares
 * the server dead once no message at all has arrived for `silenceMs`.
 *
 * The hard part is the page's own timers. Hidden tabs run timers late (Chromium: aligned to 1 s,
 * then to 1 min after five minutes hidden), a frozen or suspended page runs none, and a timer
 * that finally runs can run before the messages that arrived meanwhile are delivered. An
 * application heartbeat that trusts its timer then declares a live server dead (socket.io #4040,
 * #3507). So:
 *
 * - Silence is measured with `performance.now()`, from the last message to now. Messages only
 *   write that time; one timer, due at `lastMessageAt + silenceMs`, compares when it runs and
 *   re-arms for the rest when a message came since.
 * - Silence counts only while the watch was awake to hear. A check that runs more than
 *   {@link LATE_MS} after its due time, and every check on `visibilitychange` to visible, follows
 *   a stretch the page may have slept through, and messages that arrived meanwhile may still be
 *   queued behind it. Such a check counts the silence only up to the last time the watch is sure
 *   it heard everything: `awakeAt` (a message, or an on-time check), or an earlier wake-up at least
 *   LATE_MS back (the events queued then have been delivered since). When that silence falls short
 *   of `silenceMs`, the timer re-arms for the remaining silence, and for at least LATE_MS.
 * - An on-time check, or a late one whose silence was heard before the sleep, declares the
 *   server dead: the socket is closed (`closeCode`, `closeReason`) and `'dead'` dispatched, once.
 *
 * A worked example, silenceMs 45 000, the server dying right after its message at t = 0 (s):
 *
 * | t   | what runs                           | heard silence       | then                        |
 * |-----|-------------------------------------|---------------------|-----------------------------|
 * | 0   | message                             | -                   | lastMessageAt = awakeAt = 0 |
 * | 60  | timer due at 45, 15 s late (hidden) | awakeAt - 0 = 0     | re-arm for 45, woke at 60   |
 * | 120 | timer due at 105, 15 s late         | woke - 0 = 60 >= 45 | dead                        |
 *
 * With a live server sending keepalives, each message moves `lastMessageAt` and `awakeAt`
 * (network events are delivered in hidden tabs), so a late timer finds little silence and re-arms.
 * A page frozen for ten minutes wakes with its timer 10 min late and gets a fresh `silenceMs`
 * (minus nothing heard), in which the messages queued while frozen arrive.
 *
 * One timer per watch, not the shared wheel: a page has a socket or two, and the wheel's driver
 * is Node-only.
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
import { globalHost, type Host } from './host.js';
import { requireSocket, resolveWatchOptions, type ResolvedWatchOptions } from './options.js';
import type { WatchableSocket, WatchOptions } from './types.js';

/** WebSocket ready states (WHATWG). */
const CONNECTING = 0;
const OPEN = 1;

/**
 * A check this much past due was late: the page was throttled beyond Chromium's 1 s alignment
 * for hidden pages, frozen, or suspended. Also the least a watch waits after waking.
 */
export const LATE_MS = 1_000;

/** The `'dead'` event: nothing arrived for `silentMs` (>= `silenceMs`); the socket is already closing. */
export class DeadEvent<S extends WatchableSocket = WatchableSocket> extends Event {
  /** The watched socket, `close()`d already (`readyState` CLOSING or CLOSED). */
  readonly socket: S;
  /** Milliseconds since the last message (or since the watch started, when none came). */
  readonly silentMs: number;

  constructor(socket: S, silentMs: number) {
    super('dead');
    this.socket = socket;
    this.silentMs = silentMs;
  }
}

/** A listener as `EventTarget` takes one, in terms both the DOM's and Node's declarations accept. */
type Listener<E extends Event> = ((event: E) => void) | { handleEvent(event: E): void };
/** `addEventListener`'s options, likewise. */
type ListenerOptions = boolean | { capture?: boolean; once?: boolean; passive?: boolean; signal?: AbortSignal };

/** The typed form of {@link SilenceWatch}'s listener methods: a `'dead'` listener gets a {@link DeadEvent}. */
export interface SilenceWatch<S extends WatchableSocket = WatchableSocket> {
  addEventListener(type: 'dead', listener: Listener<DeadEvent<S>> | null, options?: ListenerOptions): void;
  addEventListener(type: string, listener: Listener<Event> | null, options?: ListenerOptions): void;
  removeEventListener(type: 'dead', listener: Listener<DeadEvent<S>> | null, options?: ListenerOptions): void;
  removeEventListener(type: string, listener: Listener<Event> | null, options?: ListenerOptions): void;
}

/**
 * Watches one WebSocket for server silence; create it with {@link watch}. An `EventTarget` that
 * dispatches {@link DeadEvent} (`'dead'`) once. It adds listeners to the socket (and to
 * `document` for `visibilitychange`) and nothing else: no own property, no patched method.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the interface above only adds typed overloads of EventTarget's methods
export class SilenceWatch<S extends WatchableSocket = WatchableSocket> extends EventTarget {
  /** The socket watched. */
  readonly socket: S;
  /** The options in effect, defaults applied. */
  readonly options: ResolvedWatchOptions;
  private readonly host: Host;
  private lastAt = NaN;
  /** Silence is heard up to here for sure: a message, or an on-time check (see the module comment). */
  private awakeAt = NaN;
  /** When the watch last woke from a stretch it may have slept through (a late check, the page shown). */
  private wokeAt = -Infinity;
  /** When the pending timer is due; Infinity when none is. */
  private dueAt = Infinity;
  private timer: unknown = undefined;
  private stopped = false;
  private readonly onOpen = (): void => this.start();
  private readonly onMessage = (): void => {
    this.lastAt = this.awakeAt = this.host.now();
  };
  private readonly onClose = (): void => this.stop();
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.check(this.host.now() - this.dueAt > LATE_MS);
  };
  private readonly onVisibility = (): void => {
    if (this.host.document?.visibilityState === 'visible') this.check(true);
  };

  /**
   * @param host - the runtime (clock, timers, document): {@link globalHost} unless a test passes a fake
   * @throws TypeError/RangeError for a bad socket or option
   */
  constructor(socket: S, options: WatchOptions, host: Host = globalHost()) {
    super();
    requireSocket(socket);
    this.options = resolveWatchOptions(options);
    this.socket = socket;
    this.host = host;
    const state = socket.readyState;
    if (state !== CONNECTING && state !== OPEN) {
      // Closing or closed: nothing will arrive, and there is nothing to declare.
      this.stopped = true;
      return;
    }
    socket.addEventListener('message', this.onMessage);
    socket.addEventListener('close', this.onClose);
    if (state === OPEN) this.start();
    else socket.addEventListener('open', this.onOpen);
  }

  /** The `performance.now()` reading of the last message (of the start, before one); NaN while connecting. */
  get lastMessageAt(): number {
    return this.lastAt;
  }

  /** True once stopped: by {@link SilenceWatch.stop}, the socket's `'close'`, or a `'dead'` verdict. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Whether a message event is the server's keepalive (its data equals `keepaliveMessage`), for the
   * app's own message handler: `if (watcher.isKeepalive(event)) return;`.
   */
  isKeepalive(event: { readonly data?: unknown }): boolean {
    return event.data === this.options.keepaliveMessage;
  }

  /**
   * Stops watching and leaves the socket open: removes every listener it added and its timer.
   * Idempotent; the socket's `'close'` does it by itself.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const socket = this.socket;
    socket.removeEventListener('open', this.onOpen);
    socket.removeEventListener('message', this.onMessage);
    socket.removeEventListener('close', this.onClose);
    this.host.document?.removeEventListener('visibilitychange', this.onVisibility);
    if (this.timer !== undefined) this.host.clearTimer(this.timer);
    this.timer = undefined;
    this.dueAt = Infinity;
  }

  /** Same as {@link SilenceWatch.stop}, for `using watcher = watch(socket, ...)` where `Symbol.dispose` exists. */
  declare [Symbol.dispose]: () => void;

  /** The socket is open: silence counts from now. */
  private start(): void {
    if (this.stopped) return;
    this.socket.removeEventListener('open', this.onOpen);
    this.lastAt = this.awakeAt = this.host.now();
    this.host.document?.addEventListener('visibilitychange', this.onVisibility);
    this.arm(this.lastAt + this.options.silenceMs);
  }

  /**
   * Compares the silence with `silenceMs` and acts (see the module comment).
   *
   * @param afterSleep - the check follows a stretch the page may have slept through (a late timer, the page shown again)
   */
  private check(afterSleep: boolean): void {
    if (this.stopped || Number.isNaN(this.lastAt)) return;
    const now = this.host.now();
    const silenceMs = this.options.silenceMs;
    if (now - this.lastAt < silenceMs) {
      if (afterSleep) this.wokeAt = now;
      else this.awakeAt = now;
      this.arm(this.lastAt + silenceMs);
      return;
    }
    // Up to when silence was surely heard: now, or (after a sleep) before it.
    const heardUntil = !afterSleep
      ? now
      : now - this.wokeAt >= LATE_MS
        ? Math.max(this.awakeAt, this.wokeAt)
        : this.awakeAt;
    const heard = heardUntil - this.lastAt;
    if (heard >= silenceMs) return this.declareDead(now - this.lastAt);
    this.wokeAt = now;
    this.arm(now + Math.max(silenceMs - heard, LATE_MS));
  }

  /** One timer at `at`, replacing any pending one. */
  private arm(at: number): void {
    if (this.timer !== undefined) this.host.clearTimer(this.timer);
    this.dueAt = at;
    this.timer = this.host.setTimer(this.onTimer, Math.max(0, at - this.host.now()));
  }

  private declareDead(silentMs: number): void {
    this.stop();
    const socket = this.socket;
    if (socket.readyState === OPEN) socket.close(this.options.closeCode, this.options.closeReason);
    this.dispatchEvent(new DeadEvent(socket, silentMs));
  }
}

// Only where the runtime has it: a computed `[undefined]` key would name a method "undefined".
if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(SilenceWatch.prototype, Symbol.dispose, {
    value(this: SilenceWatch) {
      this.stop();
    },
    writable: true,
    configurable: true,
  });
}

/**
 * Watches a WHATWG `WebSocket` (a browser's, Node 22+'s global one, Deno's, Bun's, or ws's) for a
 * dead server: once no message has arrived for `silenceMs`, it closes the socket and dispatches
 * `'dead'` on the returned `EventTarget`. It never counts as silence the time its own timers were
 * throttled or the page was frozen (it measures with `performance.now()` and re-checks on
 * `visibilitychange`). Pair it with the server's `keepaliveMs`, so that a quiet live server still
 * sends something. A socket still connecting is watched from its `'open'`.
 *
 * @param socket - the socket; listeners are added to it, nothing else
 * @param options - `silenceMs` (required) and see {@link WatchOptions}
 * @returns the watch: `'dead'` events, `isKeepalive(event)`, `stop()`
 * @throws TypeError/RangeError for a bad socket or option
 * @example
 * ```ts
 * import { watch } from '@tickwheel/ws/browser';
 *
 * const socket = new WebSocket('wss://example.com/live');
 * const watcher = watch(socket, { silenceMs: 45_000 }); // the server: heartbeat(wss, { keepaliveMs: 20_000 })
 * watcher.addEventListener('dead', () => reconnect());
 * socket.addEventListener('message', (event) => {
 *   if (watcher.isKeepalive(event)) return;
 *   render(JSON.parse(event.data));
 * });
 * ```
 */
export function watch<S extends WatchableSocket>(socket: S, options: WatchOptions): SilenceWatch<S> {
  return new SilenceWatch(socket, options);
}
