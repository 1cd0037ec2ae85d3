import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import { rebuildResponse, TimedBody } from '../src/timed-body.js';
import { RecordingObserver } from './helpers/recording-observer.js';
import { rejectionOf, settle } from './helpers/scripted-fetch.js';

function controlledSource(): {
  stream: ReadableStream<Uint8Array>;
  controller: ReadableStreamDefaultController<Uint8Array>;
  cancelled: unknown[];
} {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const cancelled: unknown[] = [];
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: (reason) => void cancelled.push(reason),
  });
  return { stream, controller, cancelled };
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('timed-body', () => {
  describe('TimedBody', () => {
    it('pulls only when the consumer reads, and relays chunks and the end', async () => {
      const { stream, controller } = controlledSource();
      const observer = new RecordingObserver();
      const reader = new ReadableStream(new TimedBody(stream, observer), { highWaterMark: 0 }).getReader();
      controller.enqueue(bytes('a'));
      await settle();
      expect(observer.events).toEqual([]);
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('a');
      const next = reader.read();
      controller.close();
      expect((await next).done).toBe(true);
      expect(observer.events).toEqual(['pull', 'chunk', 'pull', 'done']);
    });

    it('fail() rejects the pending read with the error and cancels the source', async () => {
      const { stream, cancelled } = controlledSource();
      const body = new TimedBody(stream, new RecordingObserver());
      const reader = new ReadableStream(body, { highWaterMark: 0 }).getReader();
      const read = reader.read();
      await settle();
      const error = new Error('timed out');
      body.fail(error);
      expect(await rejectionOf(read)).toBe(error);
      await settle();
      expect(cancelled).toEqual([error]);
    });

    it('passes a source error through bodyError()', async () => {
      const { stream, controller } = controlledSource();
      const observer = new RecordingObserver();
      observer.bodyError = (error) => {
        observer.events.push('error');
        return new Error(`translated ${(error as Error).message}`);
      };
      const reader = new ReadableStream(new TimedBody(stream, observer), { highWaterMark: 0 }).getReader();
      const read = reader.read();
      controller.error(new Error('socket reset'));
      expect(((await rejectionOf(read)) as Error).message).toBe('translated socket reset');
      expect(observer.events).toEqual(['pull', 'error', 'done']);
    });

    it('cancels the source when the consumer cancels', async () => {
      const { stream, cancelled } = controlledSource();
      const observer = new RecordingObserver();
      await new ReadableStream(new TimedBody(stream, observer), { highWaterMark: 0 }).cancel('enough');
      expect(cancelled).toEqual(['enough']);
      expect(observer.events).toEqual(['done']);
    });
  });

  describe('rebuildResponse', () => {
    it.each([
      ['global', Response],
      ['undici', undici.Response],
    ] as const)('keeps the %s Response class, status, headers and url', async (_name, ResponseClass) => {
      const original = new ResponseClass('ignored', { status: 201, statusText: 'Made', headers: { 'x-a': '1' } });
      Object.defineProperty(original, 'url', { value: 'http://127.0.0.1/x' });
      const rebuilt = rebuildResponse(
        original,
        new ReadableStream({ start: (c) => (c.enqueue(bytes('new body')), c.close()) }),
      )!;
      expect(rebuilt).toBeInstanceOf(ResponseClass);
      expect(rebuilt).toMatchObject({ status: 201, statusText: 'Made', url: 'http://127.0.0.1/x', redirected: false });
      expect(rebuilt.headers.get('x-a')).toBe('1');
      expect(await rebuilt.text()).toBe('new body');
    });

    it('returns undefined for an object that is not a fetch Response', () => {
      expect(rebuildResponse({ body: null, status: 200 }, new ReadableStream())).toBeUndefined();
    });
  });
});
