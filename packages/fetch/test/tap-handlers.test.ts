import { describe, expect, it } from 'vitest';
import {
  CallbackHandler,
  ControllerHandler,
  headerValue,
  tappedBody,
  UPLOAD_SLICE_BYTES,
  type TapEvents,
} from '../src/tap-handlers.js';

/** Records the events a handler reports, with the dispatch id they carry. */
class Events implements TapEvents {
  readonly seen: string[] = [];
  /** The headers reported, and the chunks of data events: kept apart from `seen`. */
  readonly headerLists: unknown[] = [];
  readonly chunks: Uint8Array[] = [];
  connect(id: number): void {
    this.seen.push(`connect ${id}`);
  }
  headers(_id: number, headers: unknown): void {
    this.headerLists.push(headers);
  }
  data(id: number, chunk: Uint8Array): void {
    this.seen.push(`data ${id}`);
    this.chunks.push(chunk);
  }
  pause(id: number): void {
    this.seen.push(`pause ${id}`);
  }
  resume(id: number): void {
    this.seen.push(`resume ${id}`);
  }
  end(id: number): void {
    this.seen.push(`end ${id}`);
  }
  uploadPull(id: number): void {
    this.seen.push(`pull ${id}`);
  }
  uploadChunk(id: number, bytes: number): void {
    this.seen.push(`chunk ${id} ${bytes}`);
  }
  uploadEnd(id: number): void {
    this.seen.push(`upload end ${id}`);
  }
}

describe('tap-handlers', () => {
  describe('CallbackHandler (undici 6 and 7)', () => {
    it('forwards every callback with its arguments and return value, and reports body events', () => {
      const calls: unknown[][] = [];
      const record =
        (name: string, result?: unknown) =>
        (...args: unknown[]): unknown => (calls.push([name, ...args]), result);
      let resumeFromUndici = 0;
      let fetchResume: (() => void) | undefined;
      const inner = {
        onConnect: record('connect'),
        onResponseStarted: record('started'),
        onHeaders: (status: number, headers: unknown, resume: () => void, statusText: string) => {
          fetchResume = resume;
          calls.push(['headers', status, headers, statusText]);
          return true;
        },
        onData: (chunk: Uint8Array) => (calls.push(['data', chunk]), false),
        onComplete: record('complete'),
        onError: record('error'),
        onUpgrade: record('upgrade'),
        onRequestUpgrade: record('request-upgrade', 'up'),
      };
      const events = new Events();
      const handler = new CallbackHandler(inner, events, 7);
      const abort = (): void => {};
      handler.onConnect(abort, 'ctx');
      handler.onResponseStarted();
      expect(handler.onHeaders(200, ['a', 'b'], () => resumeFromUndici++, 'OK')).toBe(true);
      expect(handler.onData(new Uint8Array(4))).toBe(false);
      fetchResume!();
      handler.onComplete(['t']);
      handler.onError('boom');
      handler.onUpgrade(101, [], 'socket');
      expect(handler.onRequestUpgrade(1, 2)).toBe('up');
      expect(resumeFromUndici).toBe(1);
      expect(calls).toEqual([
        ['connect', abort, 'ctx'],
        ['started'],
        ['headers', 200, ['a', 'b'], 'OK'],
        ['data', new Uint8Array(4)],
        ['complete', ['t']],
        ['error', 'boom'],
        ['upgrade', 101, [], 'socket'],
        ['request-upgrade', 1, 2],
      ]);
      expect(events.seen).toEqual(['connect 7', 'data 7', 'pause 7', 'resume 7', 'end 7', 'end 7']);
      // The headers and the very chunk fetch gets, for the event scanner.
      expect(events.headerLists).toEqual([['a', 'b']]);
      expect(events.chunks[0]).toBe(calls[3]?.[1]);
    });

    it('leaves out callbacks the inner handler does not have', () => {
      const handler = new CallbackHandler({}, new Events(), 1);
      expect(handler.onHeaders(204, [], () => {}, 'No Content')).toBeUndefined();
      expect(handler.onData(new Uint8Array(1))).toBeUndefined();
      expect(() => handler.onComplete([])).not.toThrow();
    });
  });

  describe('ControllerHandler (undici 8)', () => {
    function undiciController(): {
      paused: boolean;
      aborted: boolean;
      reason: unknown;
      rawHeaders: unknown;
      rawTrailers: unknown;
      pause(): void;
      resume(): void;
      abort(reason: unknown): void;
    } {
      return {
        paused: false,
        aborted: false,
        reason: undefined,
        rawHeaders: ['h'],
        rawTrailers: ['t'],
        pause() {
          this.paused = true;
        },
        resume() {
          this.paused = false;
        },
        abort(reason) {
          this.aborted = true;
          this.reason = reason;
        },
      };
    }

    it('hands fetch one controller per undici controller, reporting pause() and resume()', () => {
      const seenControllers: unknown[] = [];
      const inner = {
        onRequestStart: (c: unknown) => void seenControllers.push(c),
        onResponseStart: (c: unknown) => void seenControllers.push(c),
        onResponseData: (c: { pause(): void }) => {
          seenControllers.push(c);
          c.pause();
        },
        onResponseEnd: (c: unknown) => void seenControllers.push(c),
      };
      const events = new Events();
      const handler = new ControllerHandler(inner, events, 3);
      const controller = undiciController();
      handler.onRequestStart(controller, {});
      handler.onResponseStart(controller, 200, {}, 'OK');
      handler.onResponseData(controller, new Uint8Array(2));
      expect(controller.paused).toBe(true);
      const outer = seenControllers[0] as ReturnType<typeof undiciController>;
      expect(seenControllers.every((c) => c === outer)).toBe(true);
      expect(outer).not.toBe(controller);
      expect(outer.paused).toBe(true);
      outer.resume();
      expect(controller.paused).toBe(false);
      outer.abort('why');
      expect([outer.aborted, outer.reason, outer.rawHeaders, outer.rawTrailers]).toEqual([true, 'why', ['h'], ['t']]);
      handler.onResponseEnd(controller, {});
      expect(events.seen).toEqual(['connect 3', 'data 3', 'pause 3', 'resume 3', 'end 3']);
      expect(events.headerLists).toEqual([{}]);
    });

    it('reports the end of a body that failed, and forwards the error', () => {
      const errors: unknown[] = [];
      const events = new Events();
      const handler = new ControllerHandler({ onResponseError: (_c, error) => void errors.push(error) }, events, 2);
      handler.onResponseError(undiciController(), 'reset');
      expect(errors).toEqual(['reset']);
      expect(events.seen).toEqual(['end 2']);
    });
  });

  describe('tappedBody', () => {
    it('hands on the same bytes, and when undici stops early, stops the source too (as for-await over it would)', async () => {
      let returned = false;
      const source = (async function* () {
        try {
          for (let i = 0; i < 3; i++) yield await Promise.resolve(new Uint8Array(UPLOAD_SLICE_BYTES * 2).fill(i));
        } finally {
          returned = true;
        }
      })();
      const events = new Events();
      const body = tappedBody(source, events, 7, true);
      const first = await body.next();
      expect(first.value).toEqual(new Uint8Array(UPLOAD_SLICE_BYTES).fill(0));
      await body.return(undefined);
      expect(returned).toBe(true);
      expect(events.seen).toEqual(['pull 7', `chunk 7 ${UPLOAD_SLICE_BYTES}`]);
    });
  });

  describe('headerValue', () => {
    it('reads a header from undici raw headers, Buffers or strings, in any case', () => {
      const raw = [Buffer.from('Content-Type'), Buffer.from('text/event-stream'), 'x-other', 'y'];
      expect(headerValue(raw, 'content-type')).toBe('text/event-stream');
      expect(headerValue(['CONTENT-ENCODING', 'gzip'], 'content-encoding')).toBe('gzip');
      expect(headerValue(raw, 'content-encoding')).toBeUndefined();
    });

    it('reads a header from an object of lower-case names (undici 8), the first of repeated values', () => {
      expect(headerValue({ 'content-type': 'application/x-ndjson' }, 'content-type')).toBe('application/x-ndjson');
      expect(headerValue({ 'content-encoding': ['br', 'gzip'] }, 'content-encoding')).toBe('br');
      expect(headerValue({}, 'content-type')).toBeUndefined();
      expect(headerValue(null, 'content-type')).toBeUndefined();
    });
  });
});
