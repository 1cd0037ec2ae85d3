/**
 * TransportTap: the undici dispatcher that watches a response body at the transport.
 * Must not depend on: the Response or its body stream (it never touches them), the wheel or another adapter.
 *
 * Where the wrapper watches a response body without touching the Response: at the transport.
 *
 * Node's `fetch` and `undici.fetch` send every request through an undici dispatcher, the one in
 * `init.dispatcher` or the global one. The wrapper hands fetch a {@link TransportTap} as
 * `init.dispatcher`: it forwards each dispatch to the dispatcher fetch would have used, with a
 * handler that forwards every callback to fetch's own handler and tells the request's timer
 * what passed by: body bytes arriving, fetch pausing the connection because its buffer is full
 * (backpressure from a consumer that is not reading), fetch asking for more, and the end of the
 * body on the wire. The Response, its body stream and everything a caller can reach stay
 * fetch's own: nothing is swapped, wrapped or relayed.
 *
 * Two handler protocols exist: the callbacks of undici 6 and 7 (`onHeaders`, `onData`, a
 * `resume` function and a `false` return to pause), used by fetch up to Node 24, and the
 * controller protocol of undici 8 (`onResponseStart`, `onResponseData`, `controller.pause()`
 * and `resume()`), used by Node 26's fetch. The tap answers each handler in its own protocol.
 *
 * A fetch that never calls the tap (not built on undici, or a mock that replaces fetch) leaves
 * {@link TransportTap.dispatched} false, and the timer falls back to timing the body stream.
 */

/** What the tap reports to the request's timer, for the dispatch that carries the response. */
export interface TransportObserver {
  /** Body bytes arrived from the server. */
  transportData(): void;
  /** fetch's buffer is full: it paused the connection until its consumer reads. */
  transportPaused(): void;
  /** fetch asks for more body data. */
  transportResumed(): void;
  /** The body ended on the wire, completely or with an error. */
  transportEnded(): void;
}

/** The part of an undici dispatcher the tap uses. */
interface Dispatcher {
  dispatch(options: unknown, handler: object): boolean;
  readonly isMockActive?: boolean;
}

/** The global dispatcher undici 8 uses (controller protocol), and the one of undici 6 and 7. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.2');
const LEGACY_GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

type Globals = Record<symbol, Dispatcher | undefined>;

/**
 * The dispatcher handed to fetch as `init.dispatcher` for one attempt. Each redirect hop is a
 * dispatch of its own; only the latest one can carry the response fetch resolves with, so
 * events of earlier hops are ignored.
 */
export class TransportTap {
  /** True once fetch dispatched through the tap: the response body is observed here. */
  dispatched = false;
  /** The latest dispatch's body has ended on the wire. */
  ended = false;
  /** The latest dispatch is paused by fetch's backpressure. */
  paused = false;
  private latest = 0;

  /**
   * @param target - the caller's own `init.dispatcher`, or undefined for the global one
   * @param observer - told about the latest dispatch's body
   */
  constructor(
    private readonly target: Dispatcher | undefined,
    private readonly observer: TransportObserver,
  ) {}

  /** Lets undici's MockAgent behave as when it is fetch's dispatcher itself. */
  get isMockActive(): boolean | undefined {
    return (this.target ?? (globalThis as unknown as Globals)[LEGACY_GLOBAL_DISPATCHER])?.isMockActive;
  }

  dispatch(options: unknown, handler: object): boolean {
    const controllerProtocol = typeof (handler as { onResponseStart?: unknown }).onResponseStart === 'function';
    const globals = globalThis as unknown as Globals;
    const target =
      this.target ??
      (controllerProtocol
        ? (globals[GLOBAL_DISPATCHER] ?? globals[LEGACY_GLOBAL_DISPATCHER])
        : globals[LEGACY_GLOBAL_DISPATCHER]);
    if (target === undefined)
      throw new TypeError('@tickwheel/fetch: no undici global dispatcher to send the request through');
    this.dispatched = true;
    this.ended = false;
    this.paused = false;
    const id = ++this.latest;
    const tapped = controllerProtocol
      ? new ControllerHandler(handler, this, id)
      : new CallbackHandler(handler, this, id);
    return target.dispatch(options, tapped);
  }

  /** @internal from the handlers */
  data(id: number): void {
    if (id === this.latest) this.observer.transportData();
  }

  /** @internal */
  pause(id: number): void {
    if (id !== this.latest || this.paused) return;
    this.paused = true;
    this.observer.transportPaused();
  }

  /** @internal */
  resume(id: number): void {
    if (id !== this.latest || !this.paused) return;
    this.paused = false;
    this.observer.transportResumed();
  }

  /** @internal */
  end(id: number): void {
    if (id !== this.latest || this.ended) return;
    this.ended = true;
    this.observer.transportEnded();
  }
}

/** fetch's handler in the callback protocol of undici 6 and 7. */
interface CallbackProtocol {
  onConnect?(abort: (reason?: unknown) => void, context?: unknown): void;
  onResponseStarted?(): void;
  onHeaders?(status: number, headers: unknown, resume: () => void, statusText: string): boolean | undefined;
  onData?(chunk: Uint8Array): boolean | undefined;
  onComplete?(trailers: unknown): void;
  onError?(error: unknown): void;
  onUpgrade?(status: number, headers: unknown, socket: unknown): void;
  onRequestUpgrade?(...args: unknown[]): unknown;
}

/** Forwards every callback to fetch's handler, reporting body events to the tap. */
class CallbackHandler {
  constructor(
    private readonly inner: CallbackProtocol,
    private readonly tap: TransportTap,
    private readonly id: number,
  ) {}

  onConnect(abort: (reason?: unknown) => void, context?: unknown): void {
    this.inner.onConnect?.(abort, context);
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.();
  }

  onHeaders(status: number, headers: unknown, resume: () => void, statusText: string): boolean | undefined {
    const tap = this.tap;
    const id = this.id;
    return this.inner.onHeaders?.(
      status,
      headers,
      () => {
        tap.resume(id);
        resume();
      },
      statusText,
    );
  }

  onData(chunk: Uint8Array): boolean | undefined {
    this.tap.data(this.id);
    const more = this.inner.onData?.(chunk);
    if (more === false) this.tap.pause(this.id);
    return more;
  }

  onComplete(trailers: unknown): void {
    this.tap.end(this.id);
    this.inner.onComplete?.(trailers);
  }

  onError(error: unknown): void {
    this.tap.end(this.id);
    this.inner.onError?.(error);
  }

  onUpgrade(status: number, headers: unknown, socket: unknown): void {
    this.inner.onUpgrade?.(status, headers, socket);
  }

  onRequestUpgrade(...args: unknown[]): unknown {
    return this.inner.onRequestUpgrade?.(...args);
  }
}

/** The per-request controller of undici 8's handler protocol. */
interface UndiciController {
  pause(): void;
  resume(): void;
  abort(reason?: unknown): void;
  readonly paused: boolean;
  readonly aborted: boolean;
  readonly reason: unknown;
  readonly rawHeaders?: unknown;
  readonly rawTrailers?: unknown;
}

/** fetch's handler in undici 8's controller protocol. */
interface UndiciHandler {
  onRequestStart?(controller: UndiciController, context: unknown): void;
  onResponseStarted?(): void;
  onResponseStart?(controller: UndiciController, status: number, headers: unknown, statusText: string): void;
  onResponseData?(controller: UndiciController, chunk: Uint8Array): void;
  onResponseEnd?(controller: UndiciController, trailers: unknown): void;
  onResponseError?(controller: UndiciController, error: unknown): void;
  onRequestUpgrade?(controller: UndiciController, status: number, headers: unknown, socket: unknown): unknown;
}

/**
 * Forwards every callback to fetch's handler with a controller that reports fetch's
 * pause() and resume() to the tap; one such controller per dispatch.
 */
class ControllerHandler {
  private outer: TapController | undefined;

  constructor(
    private readonly inner: UndiciHandler,
    private readonly tap: TransportTap,
    private readonly id: number,
  ) {}

  onRequestStart(controller: UndiciController, context: unknown): void {
    this.inner.onRequestStart?.(this.wrap(controller), context);
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.();
  }

  onResponseStart(controller: UndiciController, status: number, headers: unknown, statusText: string): void {
    this.inner.onResponseStart?.(this.wrap(controller), status, headers, statusText);
  }

  onResponseData(controller: UndiciController, chunk: Uint8Array): void {
    this.tap.data(this.id);
    this.inner.onResponseData?.(this.wrap(controller), chunk);
  }

  onResponseEnd(controller: UndiciController, trailers: unknown): void {
    this.tap.end(this.id);
    this.inner.onResponseEnd?.(this.wrap(controller), trailers);
  }

  onResponseError(controller: UndiciController, error: unknown): void {
    this.tap.end(this.id);
    this.inner.onResponseError?.(this.wrap(controller), error);
  }

  onRequestUpgrade(controller: UndiciController, status: number, headers: unknown, socket: unknown): unknown {
    return this.inner.onRequestUpgrade?.(this.wrap(controller), status, headers, socket);
  }

  private wrap(controller: UndiciController): UndiciController {
    if (this.outer === undefined || this.outer.inner !== controller)
      this.outer = new TapController(controller, this.tap, this.id);
    return this.outer;
  }
}

/** undici 8's controller as fetch sees it: the same, with pause() and resume() reported. */
class TapController implements UndiciController {
  constructor(
    readonly inner: UndiciController,
    private readonly tap: TransportTap,
    private readonly id: number,
  ) {}

  pause(): void {
    this.inner.pause();
    this.tap.pause(this.id);
  }

  resume(): void {
    this.tap.resume(this.id);
    this.inner.resume();
  }

  abort(reason?: unknown): void {
    this.inner.abort(reason);
  }

  get paused(): boolean {
    return this.inner.paused;
  }

  get aborted(): boolean {
    return this.inner.aborted;
  }

  get reason(): unknown {
    return this.inner.reason;
  }

  get rawHeaders(): unknown {
    return this.inner.rawHeaders;
  }

  get rawTrailers(): unknown {
    return this.inner.rawTrailers;
  }
}
