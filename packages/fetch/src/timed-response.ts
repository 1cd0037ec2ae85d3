import type { ReadableStreamDefaultReader, ReadableStreamReadResult } from 'node:stream/web';
import { rebuildResponse, TimedBody, type BodyObserver } from './timed-body.js';
import type { ResponseLike } from './types.js';

/**
 * Times the body of the Response that fetch returned, in place: the caller gets the very same
 * object (its class, `url`, `type`, `redirected` and internal state untouched), whose body
 * accessors are routed through the request's timer.
 *
 * How: the response's prototype is swapped for one that inherits from its own class's prototype
 * (one per class, cached) and overrides `body`, `text`, `json`, `arrayBuffer`, `bytes`, `blob` and
 * `formData`. `text()`, `json()`, `arrayBuffer()` and `bytes()` read the original body stream
 * directly, chunk by chunk, telling the timer about each read: no second stream and no second
 * Response per request, which is what keeps the wrapper within a few percent of bare fetch.
 * `body` hands out a relaying stream ({@link TimedBody}), created on first access. `blob()`
 * and `formData()`, and any method called after `body` was taken, go through a Response rebuilt
 * around that stream, so their parsing stays fetch's own.
 */

const STATE = Symbol('@tickwheel/fetch.timedBody');

type BodyHolder = ResponseLike & { [STATE]: TimedResponseBody };
type Method = (this: unknown) => Promise<unknown>;

const decoder = new TextDecoder();

/** The timed body of one response. */
export class TimedResponseBody {
  private relay: TimedBody | undefined;
  private stream: ReadableStream<Uint8Array> | undefined;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private failed = false;
  private failure: unknown;

  constructor(
    private readonly observer: BodyObserver,
    /** Reads the response's current body stream through its class's own `body` getter. */
    private readonly source: () => ReadableStream<Uint8Array> | null,
  ) {}

  /** The stream `response.body` returns: a timed relay of the original, created once. */
  body(): ReadableStream<Uint8Array> | null {
    if (this.stream === undefined) {
      const source = this.source();
      if (source === null) return null;
      this.relay = new TimedBody(source, this.observer);
      this.stream = new ReadableStream(this.relay, { highWaterMark: 0 });
      if (this.failed) this.relay.fail(this.failure);
    }
    return this.stream;
  }

  /** True once `body` was taken: reads must then go through that stream. */
  get relayed(): boolean {
    return this.stream !== undefined;
  }

  /** Reads the whole original body, timing each read. */
  async readAll(source: ReadableStream<Uint8Array>): Promise<Uint8Array> {
    const observer = this.observer;
    const reader = source.getReader();
    this.reader = reader;
    const chunks: Uint8Array[] = [];
    let length = 0;
    try {
      for (;;) {
        if (this.failed) throw this.failure;
        observer.pullStarted();
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch (error) {
          throw this.failed ? this.failure : observer.bodyError(error);
        }
        // fail() cancels the reader, which ends a pending read as "done": report the failure.
        if (this.failed) throw this.failure;
        if (result.done) break;
        observer.chunkArrived();
        chunks.push(result.value);
        length += result.value.byteLength;
      }
    } finally {
      this.reader = undefined;
      observer.bodyDone();
    }
    return concat(chunks, length);
  }

  /** Ends the body with `error`: a pending or later read rejects with it. */
  fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.failure = error;
    this.relay?.fail(error);
    this.reader?.cancel(error).catch(ignore);
  }
}

/**
 * Routes `response`'s body through a {@link TimedResponseBody} fed to `observer`.
 * @returns the timed body, or undefined when `response` is not a fetch Response (no `body` getter
 *   on its prototype chain) and cannot be timed
 */
export function timeResponseBody(response: ResponseLike, observer: BodyObserver): TimedResponseBody | undefined {
  const base = Object.getPrototypeOf(response) as object | null;
  if (base === null) return undefined;
  let timed = prototypes.get(base);
  if (timed === undefined) {
    timed = createTimedPrototype(base);
    if (timed === undefined) return undefined;
    prototypes.set(base, timed);
  }
  const getBody = timed.getBody;
  const body = new TimedResponseBody(observer, () => getBody.call(response));
  (response as BodyHolder)[STATE] = body;
  Object.setPrototypeOf(response, timed.prototype);
  return body;
}

interface TimedPrototype {
  readonly prototype: object;
  readonly getBody: (this: unknown) => ReadableStream<Uint8Array> | null;
}

const prototypes = new WeakMap<object, TimedPrototype>();

function createTimedPrototype(base: object): TimedPrototype | undefined {
  const getBody = findGetter(base, 'body') as TimedPrototype['getBody'] | undefined;
  const getBodyUsed = findGetter(base, 'bodyUsed');
  if (getBody === undefined || getBodyUsed === undefined) return undefined;
  const descriptors: PropertyDescriptorMap = {
    body: {
      get(this: BodyHolder) {
        return this[STATE].body();
      },
      enumerable: true,
      configurable: true,
    },
  };
  const direct: Record<string, (bytes: Uint8Array) => unknown> = {
    text: (bytes) => decoder.decode(bytes),
    json: (bytes) => JSON.parse(decoder.decode(bytes)),
    arrayBuffer: (bytes) => toArrayBuffer(bytes),
    bytes: (bytes) => new Uint8Array(toArrayBuffer(bytes)),
  };
  for (const name of ['text', 'json', 'arrayBuffer', 'bytes', 'blob', 'formData']) {
    const original = findMethod(base, name);
    if (original === undefined) continue;
    const convert = direct[name];
    const method = function (this: BodyHolder): Promise<unknown> {
      const state = this[STATE];
      if (state.relayed || convert === undefined) return viaRelay(this, state, name, original);
      const source = getBody.call(this);
      // Nothing to time, or a body already used or locked: fetch's own method answers (and throws).
      if (source === null || source.locked || getBodyUsed.call(this) === true) return original.call(this);
      return state.readAll(source).then(convert);
    };
    Object.defineProperty(method, 'name', { value: name });
    descriptors[name] = { value: method, writable: true, enumerable: true, configurable: true };
  }
  return { prototype: Object.create(base, descriptors) as object, getBody };
}

/** Runs `name` on a Response rebuilt around the relayed body, so fetch's own parsing applies. */
function viaRelay(response: BodyHolder, state: TimedResponseBody, name: string, original: Method): Promise<unknown> {
  const stream = state.body();
  const rebuilt = stream === null ? undefined : rebuildResponse(response, stream);
  if (rebuilt === undefined) return original.call(response);
  return (rebuilt as unknown as Record<string, Method>)[name]!.call(rebuilt);
}

function findGetter(proto: object | null, name: string): ((this: unknown) => unknown) | undefined {
  for (let p = proto; p !== null; p = Object.getPrototypeOf(p) as object | null) {
    const descriptor = Object.getOwnPropertyDescriptor(p, name);
    if (descriptor !== undefined) return descriptor.get;
  }
  return undefined;
}

function findMethod(proto: object, name: string): Method | undefined {
  const value = (proto as Record<string, unknown>)[name];
  return typeof value === 'function' ? (value as Method) : undefined;
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** A fresh ArrayBuffer holding exactly `bytes` (chunks may be views into a larger pooled buffer). */
function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  return bytes.slice().buffer;
}

function ignore(): void {}
