import { describe, expect, it } from 'vitest';
import { callerSignal, isReplayable, isRequest, requestMethod, requestUrl } from '../src/request-info.js';

describe('request-info', () => {
  describe('requestUrl', () => {
    it('reads strings, URLs and Requests', () => {
      expect(requestUrl('http://127.0.0.1/a')).toBe('http://127.0.0.1/a');
      expect(requestUrl(new URL('http://127.0.0.1/b?q=1'))).toBe('http://127.0.0.1/b?q=1');
      expect(requestUrl(new Request('http://127.0.0.1/c'))).toBe('http://127.0.0.1/c');
    });
  });

  describe('requestMethod', () => {
    it('prefers init.method, then the Request method, upper-cased, default GET', () => {
      expect(requestMethod('http://127.0.0.1/', undefined)).toBe('GET');
      expect(requestMethod('http://127.0.0.1/', { method: 'put' })).toBe('PUT');
      expect(requestMethod(new Request('http://127.0.0.1/', { method: 'DELETE' }), undefined)).toBe('DELETE');
      expect(requestMethod(new Request('http://127.0.0.1/', { method: 'DELETE' }), { method: 'patch' })).toBe('PATCH');
    });
  });

  describe('callerSignal', () => {
    it('prefers init.signal over the Request signal, as fetch does', () => {
      const a = new AbortController().signal;
      const b = new AbortController().signal;
      expect(callerSignal('http://127.0.0.1/', undefined)).toBeUndefined();
      expect(callerSignal('http://127.0.0.1/', { signal: null })).toBeUndefined();
      expect(callerSignal(new Request('http://127.0.0.1/', { signal: a }), { signal: b })).toBe(b);
      const request = new Request('http://127.0.0.1/', { signal: a });
      // A Request keeps its own signal that follows the one it was given.
      expect(callerSignal(request, undefined)).toBe(request.signal);
    });
  });

  describe('isRequest', () => {
    it('tells Requests from URLs and strings', () => {
      expect(isRequest(new Request('http://127.0.0.1/'))).toBe(true);
      expect(isRequest(new URL('http://127.0.0.1/'))).toBe(false);
      expect(isRequest('http://127.0.0.1/')).toBe(false);
    });
  });

  describe('isReplayable', () => {
    it('accepts value bodies and refuses streams and iterables', () => {
      expect(isReplayable(undefined)).toBe(true);
      for (const body of [
        null,
        'text',
        new ArrayBuffer(2),
        new Uint8Array(2),
        new Blob(['x']),
        new URLSearchParams('a=1'),
        new FormData(),
      ]) {
        expect(isReplayable({ body })).toBe(true);
      }
      expect(isReplayable({ body: new ReadableStream() })).toBe(false);
      expect(isReplayable({ body: (async function* () {})() })).toBe(false);
    });
  });
});
