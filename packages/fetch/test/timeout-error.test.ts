import { describe, expect, it } from 'vitest';
import { TimeoutError } from '../src/timeout-error.js';

describe('TimeoutError', () => {
  const error = new TimeoutError(
    'GET http://127.0.0.1/x: no response headers within 5 ms (headersMs)',
    'headers',
    5,
    'http://127.0.0.1/x',
    'GET',
  );

  it('has the name and code of the reason AbortSignal.timeout() aborts with', async () => {
    const native = AbortSignal.timeout(1);
    await new Promise((resolve) => native.addEventListener('abort', resolve));
    const reason = native.reason as DOMException;
    expect(error.name).toBe(reason.name);
    expect(error.name).toBe('TimeoutError');
    expect(error.code).toBe(reason.code);
    expect(error.code).toBe(DOMException.TIMEOUT_ERR);
  });

  it('is an instance of Error, DOMException and TimeoutError', () => {
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(DOMException);
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it('carries the phase, the limit, the url and the method', () => {
    expect(error).toMatchObject({ phase: 'headers', timeoutMs: 5, url: 'http://127.0.0.1/x', method: 'GET' });
    expect(error.message).toBe('GET http://127.0.0.1/x: no response headers within 5 ms (headersMs)');
  });

  it('has a stack that starts at the code that created it', () => {
    expect(error.stack).toMatch(/^TimeoutError: GET http/);
    expect(error.stack!.split('\n')[1]).toContain('timeout-error.test.ts');
  });
});
