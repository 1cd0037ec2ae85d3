import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { publishRetry, publishTimeout, timeoutChannel } from '../src/channels.js';
import { FETCH_RETRY_CHANNEL, FETCH_TIMEOUT_CHANNEL, TimeoutError } from '../src/index.js';

function listen(name: string, stops: Array<() => void>): unknown[] {
  const messages: unknown[] = [];
  const listener = (message: unknown) => messages.push(message);
  diagnosticsChannel.subscribe(name, listener);
  stops.push(() => diagnosticsChannel.unsubscribe(name, listener));
  return messages;
}

const error = new TimeoutError(
  'GET http://127.0.0.1:8080/a?b=c: no response headers within 200 ms (headersMs)',
  'headers',
  200,
  'http://127.0.0.1:8080/a?b=c',
  'GET',
);

describe('channels', () => {
  const stops: Array<() => void> = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('names its channels tickwheel:fetch:*', () => {
    expect([FETCH_TIMEOUT_CHANNEL, FETCH_RETRY_CHANNEL]).toEqual(['tickwheel:fetch:timeout', 'tickwheel:fetch:retry']);
  });

  describe('publishTimeout', () => {
    it("publishes the phase, method, the URL's origin only, the limit, elapsed time and attempt", () => {
      const messages = listen(FETCH_TIMEOUT_CHANNEL, stops);
      publishTimeout(error, 201, 1, undefined);
      expect(messages).toEqual([
        {
          phase: 'headers',
          method: 'GET',
          origin: 'http://127.0.0.1:8080',
          limitMs: 200,
          elapsedMs: 201,
          attempt: 1,
          error,
        },
      ]);
    });

    it('hands back the context captured when the request started', () => {
      const messages = listen(FETCH_TIMEOUT_CHANNEL, stops);
      const context = { span: 'request 1' };
      publishTimeout(error, 201, 0, context);
      expect(messages).toEqual([expect.objectContaining({ phase: 'headers', context })]);
    });

    it('builds nothing while nobody listens', () => {
      expect(timeoutChannel.hasSubscribers).toBe(false);
      const unparsable = new TimeoutError('x', 'total', 1, 'not a url', 'GET');
      expect(() => publishTimeout(unparsable, 1, 0, undefined)).not.toThrow();
    });

    it("gives 'null' as the origin of a URL that does not parse, as URL#origin does for opaque ones", () => {
      const messages = listen(FETCH_TIMEOUT_CHANNEL, stops);
      publishTimeout(new TimeoutError('x', 'total', 1, 'not a url', 'GET'), 1, 0, undefined);
      expect(messages).toEqual([expect.objectContaining({ origin: 'null' })]);
    });
  });

  describe('publishRetry', () => {
    it('publishes the retry number, its backoff delay and the timeout that caused it', () => {
      const messages = listen(FETCH_RETRY_CHANNEL, stops);
      publishRetry(error, 2, 200, error, undefined, undefined);
      expect(messages).toEqual([
        {
          method: 'GET',
          origin: 'http://127.0.0.1:8080',
          attempt: 2,
          delayMs: 200,
          error,
          status: undefined,
          context: undefined,
        },
      ]);
    });

    it('publishes the status of a retried response, with no error', () => {
      const messages = listen(FETCH_RETRY_CHANNEL, stops);
      publishRetry({ method: 'PUT', url: 'http://127.0.0.1:8080/x?y' }, 1, 300, undefined, 503, undefined);
      expect(messages).toEqual([
        {
          method: 'PUT',
          origin: 'http://127.0.0.1:8080',
          attempt: 1,
          delayMs: 300,
          error: undefined,
          status: 503,
          context: undefined,
        },
      ]);
    });
  });
});
