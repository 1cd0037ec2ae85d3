import { describe, expect, it } from 'vitest';
import { LIFT_BODY, LIFT_HEADERS, TransportTap, type TransportObserver } from '../src/transport-tap.js';

class Recorder implements TransportObserver {
  readonly events: string[] = [];
  transportConnected(): void {
    this.events.push('connected');
  }
  transportHeaders(contentType: string | undefined, contentEncoding: string | undefined): void {
    this.events.push(`headers ${contentType} ${contentEncoding}`);
  }
  transportData(): void {
    this.events.push('data');
  }
  transportPaused(): void {
    this.events.push('paused');
  }
  transportResumed(): void {
    this.events.push('resumed');
  }
  transportEnded(): void {
    this.events.push('ended');
  }
  uploadPulled(): void {
    this.events.push('pull');
  }
  uploadChunk(bytes: number): void {
    this.events.push(`chunk ${bytes}`);
  }
  uploadEnded(): void {
    this.events.push('upload ended');
  }
}

/** An async generator of `chunks`, as fetch hands undici a request body. */
async function* fetchBody(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield await Promise.resolve(chunk);
}

/** Pulls a body as undici does, every chunk in turn. */
async function drain(body: AsyncIterable<Uint8Array>): Promise<number[]> {
  const sizes: number[] = [];
  for await (const chunk of body) sizes.push(chunk.byteLength);
  return sizes;
}

/** A dispatcher that keeps the handlers it is given, for the test to drive. */
function recordingDispatcher(): {
  dispatch(options: unknown, handler: object): boolean;
  handlers: Array<Record<string, (...args: unknown[]) => unknown>>;
} {
  const handlers: Array<Record<string, (...args: unknown[]) => unknown>> = [];
  return { handlers, dispatch: (_options, handler) => (handlers.push(handler as never), true) };
}

describe('transport-tap', () => {
  describe('TransportTap (undici 6 and 7 callbacks)', () => {
    it('forwards every callback to fetch handler and reports data, backpressure and the end', () => {
      const target = recordingDispatcher();
      const observer = new Recorder();
      const tap = new TransportTap(target, observer);
      const calls: unknown[][] = [];
      let resumeFromFetch: (() => void) | undefined;
      let more = true;
      const fetchHandler = {
        onConnect: (...args: unknown[]) => void calls.push(['connect', ...args]),
        onHeaders: (status: number, _headers: unknown, resume: () => void) => {
          resumeFromFetch = resume;
          calls.push(['headers', status]);
          return true;
        },
        onData: (chunk: Uint8Array) => (calls.push(['data', chunk.byteLength]), more),
        onComplete: () => void calls.push(['complete']),
        onError: (error: unknown) => void calls.push(['error', error]),
      };
      expect(tap.dispatch({ path: '/' }, fetchHandler)).toBe(true);
      expect(tap.dispatched).toBe(true);
      const handler = target.handlers[0];
      const abort = (): void => {};
      handler.onConnect(abort);
      let resumed = 0;
      expect(handler.onHeaders(200, [], () => resumed++, 'OK')).toBe(true);
      expect(handler.onData(new Uint8Array(3))).toBe(true);
      more = false;
      expect(handler.onData(new Uint8Array(2))).toBe(false);
      expect(tap.paused).toBe(true);
      resumeFromFetch!();
      expect(resumed).toBe(1);
      handler.onComplete([]);
      expect(calls).toEqual([['connect', abort, undefined], ['headers', 200], ['data', 3], ['data', 2], ['complete']]);
      expect(observer.events).toEqual(['connected', 'data', 'data', 'paused', 'resumed', 'ended']);
      expect(tap.ended).toBe(true);
    });

    it('reports only the latest dispatch: a redirect hop that ends late does not end the response', () => {
      const target = recordingDispatcher();
      const observer = new Recorder();
      const tap = new TransportTap(target, observer);
      const fetchHandler = { onHeaders: () => true, onData: () => true, onComplete: () => {}, onError: () => {} };
      tap.dispatch({ path: '/redirect' }, fetchHandler);
      tap.dispatch({ path: '/target' }, fetchHandler);
      target.handlers[0].onComplete([]);
      expect(tap.ended).toBe(false);
      target.handlers[1].onData(new Uint8Array(1));
      target.handlers[1].onError(new Error('reset'));
      expect(observer.events).toEqual(['data', 'ended']);
    });

    it('reports the content type and coding of the latest dispatch only when it watches event streams', () => {
      const target = recordingDispatcher();
      const observer = new Recorder();
      const fetchHandler = { onHeaders: () => true, onData: () => true, onComplete: () => {}, onError: () => {} };
      const unwatched = new TransportTap(target, observer);
      unwatched.dispatch({ path: '/' }, fetchHandler);
      target.handlers[0].onHeaders(200, ['content-type', 'text/event-stream'], () => {}, 'OK');
      expect(observer.events).toEqual([]);
      const tap = new TransportTap(target, observer, 0, false, true);
      tap.dispatch({ path: '/redirect' }, fetchHandler);
      tap.dispatch({ path: '/target' }, fetchHandler);
      target.handlers[1].onHeaders(302, ['Content-Type', 'text/html'], () => {}, 'Found');
      target.handlers[2].onHeaders(
        200,
        ['Content-Type', 'text/event-stream', 'Content-Encoding', 'gzip'],
        () => {},
        'OK',
      );
      expect(observer.events).toEqual(['headers text/event-stream gzip']);
    });

    it("lifts the dispatcher's own headersTimeout and bodyTimeout per dispatch when asked, and only then", () => {
      const seen: unknown[] = [];
      const target = { dispatch: (options: unknown) => (seen.push({ ...(options as object) }), true) };
      new TransportTap(target, new Recorder(), LIFT_HEADERS | LIFT_BODY).dispatch({ path: '/' }, {});
      new TransportTap(target, new Recorder(), LIFT_BODY).dispatch({ path: '/', headersTimeout: 7 }, {});
      new TransportTap(target, new Recorder()).dispatch({ path: '/' }, {});
      expect(seen).toEqual([
        { path: '/', headersTimeout: 0, bodyTimeout: 0 },
        { path: '/', headersTimeout: 7, bodyTimeout: 0 },
        { path: '/' },
      ]);
    });

    it('reports nothing once detached (its attempt is over)', () => {
      const target = recordingDispatcher();
      const observer = new Recorder();
      const tap = new TransportTap(target, observer);
      tap.dispatch({}, { onHeaders: () => true, onData: () => true, onError: () => {} });
      tap.detach();
      target.handlers[0].onConnect(() => {});
      target.handlers[0].onData(new Uint8Array(1));
      target.handlers[0].onError(new Error('late'));
      expect(observer.events).toEqual([]);
    });

    it('sends requests through the global dispatcher when the caller gave none', () => {
      const key = Symbol.for('undici.globalDispatcher.1');
      const globals = globalThis as unknown as Record<symbol, unknown>;
      const saved = globals[key];
      const target = recordingDispatcher();
      globals[key] = target;
      try {
        new TransportTap(undefined, new Recorder()).dispatch({}, { onHeaders: () => true });
        expect(target.handlers).toHaveLength(1);
      } finally {
        globals[key] = saved;
      }
    });
  });

  describe('TransportTap (undici 8 controller)', () => {
    it('hands fetch a controller that reports pause() and resume(), and forwards the rest', () => {
      const target = recordingDispatcher();
      const observer = new Recorder();
      const tap = new TransportTap(target, observer);
      const seen: Array<{ paused: boolean; rawHeaders: unknown }> = [];
      let fetchController:
        | { pause(): void; resume(): void; abort(reason: unknown): void; paused: boolean; rawHeaders: unknown }
        | undefined;
      const fetchHandler = {
        onRequestStart: () => {},
        onResponseStart: (controller: typeof fetchController) => void (fetchController = controller),
        onResponseData: (controller: NonNullable<typeof fetchController>) => {
          seen.push({ paused: controller.paused, rawHeaders: controller.rawHeaders });
          controller.pause();
        },
        onResponseEnd: () => {},
        onResponseError: () => {},
      };
      tap.dispatch({}, fetchHandler);
      const handler = target.handlers[0];
      const state = { paused: false, aborted: false, reason: undefined as unknown, rawHeaders: ['a', 'b'] };
      const controller = {
        ...state,
        pause() {
          this.paused = true;
        },
        resume() {
          this.paused = false;
        },
        abort(reason: unknown) {
          this.aborted = true;
          this.reason = reason;
        },
      };
      handler.onRequestStart(controller, {});
      handler.onResponseStart(controller, 200, {}, 'OK');
      handler.onResponseData(controller, new Uint8Array(1));
      expect(seen).toEqual([{ paused: false, rawHeaders: ['a', 'b'] }]);
      expect(controller.paused).toBe(true);
      fetchController!.resume();
      expect(controller.paused).toBe(false);
      fetchController!.abort('why');
      expect(controller.reason).toBe('why');
      handler.onResponseEnd(controller, {});
      expect(observer.events).toEqual(['connected', 'data', 'paused', 'resumed', 'ended']);
    });
  });

  describe('the request body', () => {
    const big = new Uint8Array(150 * 1024);

    it('reports each pull and chunk, in pieces of 64 KiB for a body of known length', async () => {
      const target = {
        options: undefined as unknown,
        dispatch: (options: unknown) => ((target.options = options), true),
      };
      const observer = new Recorder();
      new TransportTap(target, observer, 0, true).dispatch(
        { body: fetchBody([new Uint8Array(10), big]), headers: { 'content-length': String(10 + big.length) } },
        {},
      );
      const sizes = await drain((target.options as { body: AsyncIterable<Uint8Array> }).body);
      expect(sizes).toEqual([10, 65_536, 65_536, 22_528]);
      expect(observer.events).toEqual([
        'pull',
        'chunk 10',
        'pull',
        'chunk 65536',
        'pull',
        'chunk 65536',
        'pull',
        'chunk 22528',
        'pull',
        'upload ended',
      ]);
    });

    it("keeps a chunked body's chunks whole: their sizes go on the wire", async () => {
      const target = {
        options: undefined as unknown,
        dispatch: (options: unknown) => ((target.options = options), true),
      };
      new TransportTap(target, new Recorder(), 0, true).dispatch({ body: fetchBody([big]), headers: {} }, {});
      expect(await drain((target.options as { body: AsyncIterable<Uint8Array> }).body)).toEqual([big.length]);
    });

    it('leaves the body alone when no limit watches the upload, and anything but an async generator (MockAgent gets the source)', () => {
      const body = fetchBody([big]);
      const options = { body };
      new TransportTap(recordingDispatcher(), new Recorder(), 0, false).dispatch(options, {});
      expect(options.body).toBe(body);
      for (const source of ['text', big, new ReadableStream(), null]) {
        const mock = { body: source };
        new TransportTap(recordingDispatcher(), new Recorder(), 0, true).dispatch(mock, {});
        expect(mock.body).toBe(source);
      }
    });

    it('ignores the upload of a dispatch a later one replaced (a redirect)', async () => {
      const target = recordingDispatcher();
      const observer = new Recorder();
      const tap = new TransportTap(target, observer, 0, true);
      const first = { body: fetchBody([new Uint8Array(1)]) };
      tap.dispatch(first, {});
      tap.dispatch({ path: '/' }, {});
      await drain(first.body);
      expect(observer.events).toEqual([]);
    });
  });
});
