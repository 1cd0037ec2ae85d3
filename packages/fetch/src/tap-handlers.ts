/**
 * The handlers the transport tap puts between undici and fetch: every callback forwarded, body events reported.
 */

/** What the handlers report, per dispatch (`id`): the tap keeps only the latest dispatch's. */
export interface TapEvents {
  /** The connection can carry the request: undici is about to write it. */
  connect(id: number): void;
  /** The response headers arrived (`headers`: undici's raw array of name and value, or an object of lower-case names). */
  headers(id: number, headers: unknown): void;
  /** Body bytes arrived (`chunk`: as fetch gets them, only read). */
  data(id: number, chunk: Uint8Array): void;
  /** fetch paused the connection: its buffer is full. */
  pause(id: number): void;
  /** fetch asks for more. */
  resume(id: number): void;
  /** The body ended on the wire, completely or with an error. */
  end(id: number): void;
  /** undici asks for the next chunk of the request body: what it was given has left for the OS. */
  uploadPull(id: number): void;
  /** A chunk of `bytes` of the request body was handed to undici to write. */
  uploadChunk(id: number, bytes: number): void;
  /** The request body's last chunk has left for the OS. */
  uploadEnd(id: number): void;
}

/** The largest piece of a request body handed to undici at once, so that its progress shows while a big chunk goes out. */
export const UPLOAD_SLICE_BYTES = 64 * 1024;

/**
 * fetch's request body as undici pulls it (an async iterable of byte chunks, fetch's own): the
 * same bytes in the same order, each pull and each chunk reported. Between a chunk and the next
 * pull the network has the upload (undici writes it and waits for the socket to drain); between
 * a pull and the next chunk the body's source has it (a caller's stream producing). With
 * `slice`, chunks over {@link UPLOAD_SLICE_BYTES} go out in pieces of that size (only for a body
 * of known length, whose framing on the wire does not depend on its chunks).
 */
export async function* tappedBody(
  source: AsyncIterable<Uint8Array>,
  tap: TapEvents,
  id: number,
  slice: boolean,
): AsyncGenerator<Uint8Array, void, undefined> {
  tap.uploadPull(id);
  for await (const chunk of source) {
    const size = chunk.byteLength;
    if (!slice || size <= UPLOAD_SLICE_BYTES) {
      tap.uploadChunk(id, size);
      yield chunk;
      tap.uploadPull(id);
      continue;
    }
    for (let offset = 0; offset < size; offset += UPLOAD_SLICE_BYTES) {
      const piece = chunk.subarray(offset, offset + UPLOAD_SLICE_BYTES);
      tap.uploadChunk(id, piece.byteLength);
      yield piece;
      tap.uploadPull(id);
    }
  }
  tap.uploadEnd(id);
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
export class CallbackHandler {
  constructor(
    private readonly inner: CallbackProtocol,
    private readonly tap: TapEvents,
    private readonly id: number,
  ) {}

  onConnect(abort: (reason?: unknown) => void, context?: unknown): void {
    this.tap.connect(this.id);
    this.inner.onConnect?.(abort, context);
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.();
  }

  onHeaders(status: number, headers: unknown, resume: () => void, statusText: string): boolean | undefined {
    const tap = this.tap;
    const id = this.id;
    tap.headers(id, headers);
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
    this.tap.data(this.id, chunk);
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
  onResponseError?(controller: UndiciController | undefined, error: unknown): void;
  onRequestUpgrade?(controller: UndiciController, status: number, headers: unknown, socket: unknown): unknown;
}

/**
 * Forwards every callback to fetch's handler with a controller that reports fetch's
 * pause() and resume() to the tap; one such controller per dispatch.
 */
export class ControllerHandler {
  private outer: TapController | undefined;

  constructor(
    private readonly inner: UndiciHandler,
    private readonly tap: TapEvents,
    private readonly id: number,
  ) {}

  onRequestStart(controller: UndiciController, context: unknown): void {
    this.tap.connect(this.id);
    this.inner.onRequestStart?.(this.wrap(controller), context);
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.();
  }

  onResponseStart(controller: UndiciController, status: number, headers: unknown, statusText: string): void {
    this.tap.headers(this.id, headers);
    this.inner.onResponseStart?.(this.wrap(controller), status, headers, statusText);
  }

  onResponseData(controller: UndiciController, chunk: Uint8Array): void {
    this.tap.data(this.id, chunk);
    this.inner.onResponseData?.(this.wrap(controller), chunk);
  }

  onResponseEnd(controller: UndiciController, trailers: unknown): void {
    this.tap.end(this.id);
    this.inner.onResponseEnd?.(this.wrap(controller), trailers);
  }

  onResponseError(controller: UndiciController | undefined, error: unknown): void {
    this.tap.end(this.id);
    // undici 8 reports an error before any controller exists (connection refused) with none:
    // fetch's handler reads `controller?.aborted`, so it must get none from us too.
    this.inner.onResponseError?.(
      controller === undefined || controller === null ? controller : this.wrap(controller),
      error,
    );
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
    private readonly tap: TapEvents,
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

/**
 * The value of the response header `name` (lower case) in `headers` as a handler gets them:
 * undici's raw array of names and values (Buffers or strings) or an object of lower-case names
 * (a repeated header: its first value, as none of the ones read here repeats).
 */
export function headerValue(headers: unknown, name: string): string | undefined {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const key = headerText(headers[i]);
      if (key !== undefined && key.length === name.length && key.toLowerCase() === name) {
        return headerText(headers[i + 1]);
      }
    }
    return undefined;
  }
  if (typeof headers !== 'object' || headers === null) return undefined;
  const value = (headers as Record<string, unknown>)[name];
  return headerText(Array.isArray(value) ? value[0] : value);
}

const latin1 = new TextDecoder('latin1');

/** A header name or value as undici hands it: a string, or a Buffer of its bytes. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return value instanceof Uint8Array ? latin1.decode(value) : undefined;
}
