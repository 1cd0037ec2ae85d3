import { describe, expect, it } from 'vitest';
import { LIFT_BODY, LIFT_HEADERS, TransportTap, type TransportObserver } from '../src/transport-tap.js';

class Recorder implements TransportObserver {
  readonly events: string[] = [];
  transportConnected(): void {
    this.events.push('connected');
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
});
