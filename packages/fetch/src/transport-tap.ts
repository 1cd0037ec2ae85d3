/**
 * TransportTap: the undici dispatcher that watches a response body at the transport.
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

import { CallbackHandler, ControllerHandler, headerValue, tappedBody, type TapEvents } from './tap-handlers.js';

/** What the tap reports to the request's timer, for the dispatch that carries the response. */
export interface TransportObserver {
  /** The connection can carry the request: undici is about to write it (a pooled connection: at once). */
  transportConnected(): void;
  /**
   * The response headers arrived (only when the tap watches event streams): its content type
   * and content coding, as the server sent them.
   */
  transportHeaders(contentType: string | undefined, contentEncoding: string | undefined): void;
  /** Body bytes arrived from the server: `chunk` is what fetch gets, to be read only. */
  transportData(chunk: Uint8Array): void;
  /** fetch's buffer is full: it paused the connection until its consumer reads. */
  transportPaused(): void;
  /** fetch asks for more body data. */
  transportResumed(): void;
  /** The body ended on the wire, completely or with an error. */
  transportEnded(): void;
  /** undici asks for the next chunk of the request body (the first time: the upload starts). */
  uploadPulled(): void;
  /** A chunk of `bytes` of the request body goes to undici to write. */
  uploadChunk(bytes: number): void;
  /** The request body has left for the OS in full. */
  uploadEnded(): void;
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

/** Which of the dispatcher's own timeouts a tap lifts: bits of {@link TransportTap}'s `lift`. */
export const LIFT_HEADERS = 1;
export const LIFT_BODY = 2;

/** The per-dispatch options of undici that the tap may set, and the request body it may watch. */
interface DispatchOptions {
  headersTimeout?: number;
  bodyTimeout?: number;
  /** fetch's request body: an async generator of byte chunks (MockAgent gets the body's source instead). */
  body?: unknown;
  /** fetch's request headers: an object of lower-case names (undici 6 to 8), or a flat array. */
  headers?: unknown;
}

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
  /** Where the global dispatchers are read: globalThis, or the slots as they were while the tap stood in for them. */
  private globals = globalThis as unknown as Globals;

  /**
   * @param target - the caller's own `init.dispatcher` (or a Request's own), or undefined for the global one
   * @param observer - told about the latest dispatch's connection and body
   * @param lift - {@link LIFT_HEADERS} and/or {@link LIFT_BODY}: a wrapper limit covers that phase, so the
   *   dispatcher's own `headersTimeout`/`bodyTimeout` is switched off (`0`: no timer, in undici 6 to 8) for
   *   each dispatch; the wrapper's limit is then the only one
   * @param watchUpload - report the request body's upload (`headersMs` or `uploadIdleMs` is set)
   * @param watchEvents - report the response's content type and coding (`firstEventMs` or `eventIdleMs` is set)
   */
  constructor(
    private readonly target: Dispatcher | undefined,
    private readonly observer: TransportObserver,
    private readonly lift = 0,
    private readonly watchUpload = false,
    private readonly watchEvents = false,
  ) {}

  /** Lets undici's MockAgent behave as when it is fetch's dispatcher itself. */
  get isMockActive(): boolean | undefined {
    // Through this.globals: while the tap stands in for the global dispatcher, the slot holds the tap itself.
    return (this.target ?? this.globals[LEGACY_GLOBAL_DISPATCHER])?.isMockActive;
  }

  /**
   * Calls `send` (the fetch call of this attempt) with the tap standing in for undici's global
   * dispatcher, for a Request input whose own dispatcher cannot be read (undici 7 and 8 keep it
   * in a private field), handed to fetch without `init.dispatcher`: fetch then sends through the
   * Request's own dispatcher if it has one (the tap is not dispatched, and the body is timed by
   * relay), else through the tap, to the global dispatcher as it was. fetch reads the global
   * dispatcher synchronously in the call, so the slots are restored before `send` returns.
   */
  standInForGlobal<T>(send: () => T): T {
    const globals = globalThis as unknown as Globals;
    const current = globals[GLOBAL_DISPATCHER];
    const legacy = globals[LEGACY_GLOBAL_DISPATCHER];
    if (current === undefined && legacy === undefined) return send();
    this.globals = { [GLOBAL_DISPATCHER]: current, [LEGACY_GLOBAL_DISPATCHER]: legacy };
    try {
      if (current !== undefined) globals[GLOBAL_DISPATCHER] = this;
      if (legacy !== undefined) globals[LEGACY_GLOBAL_DISPATCHER] = this;
    } catch {
      // A frozen globalThis: fetch sends through the Request's dispatcher or the global one, untapped.
      return send();
    }
    try {
      return send();
    } finally {
      if (current !== undefined) globals[GLOBAL_DISPATCHER] = current;
      if (legacy !== undefined) globals[LEGACY_GLOBAL_DISPATCHER] = legacy;
    }
  }

  dispatch(options: unknown, handler: object): boolean {
    const controllerProtocol = typeof (handler as { onResponseStart?: unknown }).onResponseStart === 'function';
    const globals = this.globals;
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
    if (this.lift !== 0) {
      // fetch builds this object for this one dispatch: setting the fields on it needs no copy.
      if ((this.lift & LIFT_HEADERS) !== 0) (options as DispatchOptions).headersTimeout = 0;
      if ((this.lift & LIFT_BODY) !== 0) (options as DispatchOptions).bodyTimeout = 0;
    }
    if (this.watchUpload) {
      const body = (options as DispatchOptions).body;
      if (isAsyncIterator(body)) {
        (options as DispatchOptions).body = tappedBody(body, this, id, hasLength((options as DispatchOptions).headers));
      }
    }
    const tapped = controllerProtocol
      ? new ControllerHandler(handler, this, id)
      : new CallbackHandler(handler, this, id);
    return target.dispatch(options, tapped);
  }

  /** Ignores every later event: the attempt is over (a retry has its own tap). */
  detach(): void {
    this.latest = -1;
  }

  /** @internal from the handlers */
  connect(id: number): void {
    if (id === this.latest) this.observer.transportConnected();
  }

  /** @internal */
  headers(id: number, headers: unknown): void {
    if (!this.watchEvents || id !== this.latest) return;
    this.observer.transportHeaders(headerValue(headers, 'content-type'), headerValue(headers, 'content-encoding'));
  }

  /** @internal */
  data(id: number, chunk: Uint8Array): void {
    if (id === this.latest) this.observer.transportData(chunk);
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

  /** @internal */
  uploadPull(id: number): void {
    if (id === this.latest) this.observer.uploadPulled();
  }

  /** @internal */
  uploadChunk(id: number, bytes: number): void {
    if (id === this.latest) this.observer.uploadChunk(bytes);
  }

  /** @internal */
  uploadEnd(id: number): void {
    if (id === this.latest) this.observer.uploadEnded();
  }
}

/**
 * fetch's request body as undici 6 to 8 get it: an async generator. Anything else (a MockAgent's
 * source string or stream, or a fetch that hands undici something new) is left alone, untimed.
 */
function isAsyncIterator(body: unknown): body is AsyncIterableIterator<Uint8Array> {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { next?: unknown }).next === 'function' &&
    typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

/** Whether the request carries a `content-length` (its body's chunks then do not show on the wire). */
function hasLength(headers: unknown): boolean {
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === 'content-length') return true;
    }
    return false;
  }
  return typeof headers === 'object' && headers !== null && 'content-length' in headers;
}
