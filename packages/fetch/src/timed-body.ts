/**
 * The relay of a response body's reads to the request's timer (pull started, chunk arrived, ended).
 */
import type {
  ReadableStreamDefaultController,
  ReadableStreamDefaultReader,
  ReadableStreamReadResult,
  UnderlyingSource,
} from 'node:stream/web';
import type { ResponseLike } from './types.js';

/** What a {@link TimedBody} tells the request's timer about the reads it relays. */
export interface BodyObserver {
  /** The consumer asked for data and the body is waiting on the server for it. */
  pullStarted(): void;
  /** A chunk arrived: `chunk` is the one the consumer gets, to be read only. */
  chunkArrived(chunk: Uint8Array): void;
  /** The body ended, failed or was cancelled: release the request's timer and listeners. */
  bodyDone(): void;
  /** The error to give the consumer when the source body failed with `error`. */
  bodyError(error: unknown): unknown;
}

/**
 * The underlying source of the stream a timed response's `body` returns: it relays the original
 * body chunk by chunk, pulling only when the consumer reads (highWaterMark 0), so the body-idle timer
 * runs exactly while the consumer waits on the server. {@link TimedBody.fail} errors the body with
 * a timeout or the caller's abort reason.
 */
export class TimedBody implements UnderlyingSource<Uint8Array> {
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private settled = false;

  constructor(
    private readonly source: ReadableStream<Uint8Array>,
    private readonly observer: BodyObserver,
  ) {}

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller;
  }

  pull(): Promise<void> | undefined {
    if (this.settled) return undefined;
    this.reader ??= this.source.getReader();
    this.observer.pullStarted();
    return this.reader.read().then(this.onRead, this.onError);
  }

  cancel(reason: unknown): Promise<void> | undefined {
    if (this.settled) return undefined;
    this.settle();
    return this.reader === undefined ? this.source.cancel(reason) : this.reader.cancel(reason);
  }

  /** Errors the body with `error` (a consumer's pending read rejects with it) and cancels the source. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.settle();
    this.controller!.error(error);
    const cancelled = this.reader === undefined ? this.source.cancel(error) : this.reader.cancel(error);
    cancelled.catch(ignore);
  }

  private settle(): void {
    this.settled = true;
    this.observer.bodyDone();
  }

  private readonly onRead = (result: ReadableStreamReadResult<Uint8Array>): void => {
    if (this.settled) return;
    if (result.done) {
      this.settle();
      this.controller!.close();
      return;
    }
    const chunk = result.value;
    this.observer.chunkArrived(chunk);
    // A custom isProgress may have thrown and failed the body meanwhile.
    if (this.settled) return;
    this.controller!.enqueue(chunk);
  };

  private readonly onError = (error: unknown): void => {
    if (this.settled) return;
    const reason = this.observer.bodyError(error);
    this.settle();
    this.controller!.error(reason);
  };
}

function ignore(): void {}

type ResponseConstructor<R> = new (
  body: ReadableStream<Uint8Array>,
  init: { status: number; statusText: string; headers: unknown },
) => R;

/** Properties `new Response()` cannot set, copied onto the rebuilt response when they differ. */
const COPIED_PROPERTIES = ['url', 'redirected', 'type'] as const;

/**
 * Returns a response like `response` (same class, status, headers, url) whose body is `body`,
 * or undefined when `response` cannot be rebuilt through its constructor (not a fetch `Response`).
 * `blob()` and `formData()` of a timed response run on one, so that fetch's own parsing (MIME
 * type, multipart) applies to the relayed body.
 */
export function rebuildResponse<R extends ResponseLike>(response: R, body: ReadableStream<Uint8Array>): R | undefined {
  const source = response as R & { statusText?: unknown; headers?: unknown; constructor: unknown };
  if (typeof source.constructor !== 'function' || typeof source.statusText !== 'string') return undefined;
  let rebuilt: R;
  try {
    rebuilt = new (source.constructor as ResponseConstructor<R>)(body, {
      status: response.status,
      statusText: source.statusText,
      headers: source.headers,
    });
  } catch {
    return undefined;
  }
  for (const key of COPIED_PROPERTIES) {
    const value = (response as Record<string, unknown>)[key];
    if ((rebuilt as Record<string, unknown>)[key] !== value) {
      Object.defineProperty(rebuilt, key, { value, enumerable: true, configurable: true });
    }
  }
  return rebuilt;
}

/**
 * Times the body of a `response` that fetch did not dispatch through the tap: a Response like it
 * (see {@link rebuildResponse}) around a relay of `source` that tells `observer` about each read.
 * @returns undefined when `response` cannot be rebuilt (not a fetch Response)
 */
export function relayResponse<R extends ResponseLike>(
  response: R,
  source: ReadableStream<Uint8Array>,
  observer: BodyObserver,
): { response: R; body: TimedBody } | undefined {
  const body = new TimedBody(source, observer);
  const rebuilt = rebuildResponse(response, new ReadableStream(body, { highWaterMark: 0 }));
  return rebuilt === undefined ? undefined : { response: rebuilt, body };
}
