import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import { timeResponseBody } from '../src/timed-response.js';
import { RecordingObserver } from './helpers/recording-observer.js';
import { rejectionOf, settle } from './helpers/scripted-fetch.js';

const implementations = [
  ['global', Response],
  ['undici', undici.Response],
] as const;

function chunked(...parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
}

describe.each(implementations)('timed-response (%s Response)', (_name, ResponseClass) => {
  describe('timeResponseBody', () => {
    it('keeps the very same response object, its class, status, headers and url', () => {
      const res = new ResponseClass(chunked('a'), { status: 202, headers: { 'x-a': '1' } });
      Object.defineProperty(res, 'url', { value: 'http://127.0.0.1/x' });
      expect(timeResponseBody(res, new RecordingObserver())).toBeDefined();
      expect(res).toBeInstanceOf(ResponseClass);
      expect(res).toMatchObject({ status: 202, ok: true, url: 'http://127.0.0.1/x' });
      expect(res.headers.get('x-a')).toBe('1');
    });

    it('reads text() chunk by chunk, telling the observer about each read', async () => {
      const res = new ResponseClass(chunked('hel', 'lo'));
      const observer = new RecordingObserver();
      timeResponseBody(res, observer);
      expect(await res.text()).toBe('hello');
      expect(observer.events).toEqual(['pull', 'chunk', 'pull', 'chunk', 'pull', 'done']);
      expect(res.bodyUsed).toBe(true);
    });

    it('answers json(), arrayBuffer() and bytes() like fetch does', async () => {
      const json = new ResponseClass(chunked('{"a":', '[1,2]}'));
      timeResponseBody(json, new RecordingObserver());
      expect(await json.json()).toEqual({ a: [1, 2] });
      const buffer = new ResponseClass(chunked('ab', 'c'));
      timeResponseBody(buffer, new RecordingObserver());
      const ab = await buffer.arrayBuffer();
      expect(ab).toBeInstanceOf(ArrayBuffer);
      expect(new TextDecoder().decode(ab)).toBe('abc');
      const bytes = new ResponseClass(chunked('xyz'));
      timeResponseBody(bytes, new RecordingObserver());
      const result = await bytes.bytes();
      expect(result).toBeInstanceOf(Uint8Array);
      expect(result.byteLength).toBe(result.buffer.byteLength);
      expect(new TextDecoder().decode(result)).toBe('xyz');
    });

    it('answers blob() and formData() through fetch parsing', async () => {
      const blob = new ResponseClass(chunked('blob!'), { headers: { 'content-type': 'text/plain' } });
      const observer = new RecordingObserver();
      timeResponseBody(blob, observer);
      const b = await blob.blob();
      expect(b.type).toBe('text/plain');
      expect(await b.text()).toBe('blob!');
      expect(observer.events.at(-1)).toBe('done');
      const form = new ResponseClass(chunked('a=1&b=', '2'), { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      timeResponseBody(form, new RecordingObserver());
      const data = await form.formData();
      expect(data.get('b')).toBe('2');
    });

    it('hands out a timed relay as body, the same stream each time', async () => {
      const res = new ResponseClass(chunked('s', 't'));
      const observer = new RecordingObserver();
      timeResponseBody(res, observer);
      const body = res.body!;
      expect(res.body).toBe(body);
      let text = '';
      for await (const chunk of body) text += new TextDecoder().decode(chunk);
      expect(text).toBe('st');
      expect(observer.events).toEqual(['pull', 'chunk', 'pull', 'chunk', 'pull', 'done']);
    });

    it('reads text() through the relay once body was taken', async () => {
      const res = new ResponseClass(chunked('via ', 'relay'));
      timeResponseBody(res, new RecordingObserver());
      expect(res.body).not.toBeNull();
      expect(await res.text()).toBe('via relay');
    });

    it('throws as fetch does when the body is read twice', async () => {
      const res = new ResponseClass(chunked('once'));
      timeResponseBody(res, new RecordingObserver());
      await res.text();
      expect(await rejectionOf(res.text())).toBeInstanceOf(TypeError);
    });

    it('still clones', async () => {
      const res = new ResponseClass(chunked('twin'));
      timeResponseBody(res, new RecordingObserver());
      const copy = res.clone();
      expect(await copy.text()).toBe('twin');
      expect(await res.text()).toBe('twin');
    });

    it('rejects a pending read with the error given to fail()', async () => {
      const res = new ResponseClass(new ReadableStream<Uint8Array>());
      const body = timeResponseBody(res, new RecordingObserver())!;
      const text = res.text();
      await settle();
      const error = new Error('timed out');
      body.fail(error);
      expect(await rejectionOf(text)).toBe(error);
    });

    it('errors the relayed stream with the error given to fail()', async () => {
      const res = new ResponseClass(new ReadableStream<Uint8Array>());
      const body = timeResponseBody(res, new RecordingObserver())!;
      const read = res.body!.getReader().read();
      await settle();
      body.fail('stop');
      expect(await rejectionOf(read)).toBe('stop');
    });
  });
});

describe('timed-response', () => {
  it('returns undefined for an object that is not a fetch Response', () => {
    expect(timeResponseBody({ body: null, status: 200 }, new RecordingObserver())).toBeUndefined();
    expect(timeResponseBody(Object.create(null) as never, new RecordingObserver())).toBeUndefined();
  });
});
