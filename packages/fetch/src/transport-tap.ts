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

import { CallbackHandler, ControllerHandler, type TapEvents } from './tap-handlers.js';

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
export class TransportTap implements TapEvents {
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
