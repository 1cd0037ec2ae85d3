import { describe, expect, it } from 'vitest';
import { TransportTap, type TransportObserver } from '../src/transport-tap.js';

class Recorder implements TransportObserver {
  readonly events: string[] = [];
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
      expect(observer.events).toEqual(['data', 'data', 'paused', 'resumed', 'ended']);
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
      expect(observer.events).toEqual(['data', 'paused', 'resumed', 'ended']);
    });
  });
});
