import { expect } from 'vitest';
import { attempt, describeBody, describeResponse, differential, outcome, turn } from './harness.js';

const BODY_METHODS = ['arrayBuffer', 'blob', 'formData', 'json', 'text'] as const;

/** Runs `body` and records, in order, when it settles and when the next microtask runs. */
async function settleOrder(promise: Promise<unknown>): Promise<string[]> {
  const log: string[] = [];
  await Promise.all([
    promise.then(
      () => log.push('fulfilled'),
      () => log.push('rejected'),
    ),
    Promise.resolve().then(() => log.push('next-microtask')),
  ]);
  return log;
}

differential('transparency: aborts', (same, deviation) => {
  same(
    'WPT fetch/api/abort/general.any.js "Aborting rejects with AbortError": an already aborted signal',
    async (c) => {
      const controller = new AbortController();
      controller.abort();
      return outcome(c.fetch(`${c.base}/text`, { signal: controller.signal }));
    },
  );

  same('WPT fetch/api/abort/general.any.js "Already aborted signal rejects immediately"', async (c) => {
    return settleOrder(c.fetch(`${c.base}/text`, { signal: AbortSignal.abort() }));
  });

  same(
    "WPT fetch/api/abort/general.any.js: a reason of the caller's own is the rejection, the very object",
    async (c) => {
      const reason = new Error('gave up');
      const controller = new AbortController();
      const pending = c.fetch(`${c.base}/hang`, { signal: controller.signal });
      await turn(20);
      controller.abort(reason);
      const error = await pending.catch((e: unknown) => e);
      return { same: error === reason };
    },
  );

  same('WPT fetch/api/abort/general.any.js "Signal on request object"', async (c) => {
    const request = new c.Request(`${c.base}/text`, { signal: AbortSignal.abort('from the request') });
    return outcome(c.fetch(request));
  });

  same(
    'WPT fetch/api/abort/general.any.js "Signal retained after unrelated properties are overridden by fetch"',
    async (c) => {
      const request = new c.Request(`${c.base}/echo`, { signal: AbortSignal.abort() });
      return outcome(c.fetch(request, { method: 'POST' }));
    },
  );

  same('WPT fetch/api/abort/general.any.js "Signal removed by setting to null"', async (c) => {
    const request = new c.Request(`${c.base}/json`, { signal: AbortSignal.abort() });
    return outcome(async () => (await c.fetch(request, { signal: null })).json());
  });

  same(
    'WPT fetch/api/abort/general.any.js "Request is still \'used\' if signal is aborted before fetching"',
    async (c) => {
      const request = new c.Request(`${c.base}/echo`, {
        signal: AbortSignal.abort(),
        method: 'POST',
        body: 'foo',
        headers: { 'content-type': 'text/plain' },
      });
      const result = await outcome(c.fetch(request));
      return { result, bodyUsed: request.bodyUsed };
    },
  );

  same('WPT fetch/api/abort/general.any.js "Already aborted signal can be used for many fetches"', async (c) => {
    const signal = AbortSignal.abort();
    return Promise.all([1, 2, 3].map((i) => outcome(c.fetch(`${c.base}/text?${i}`, { signal }))));
  });

  for (const method of BODY_METHODS) {
    same(`WPT fetch/api/abort/general.any.js "response.${method}() rejects if already aborted"`, async (c) => {
      const controller = new AbortController();
      const res = await c.fetch(`${c.base}/trickle`, { signal: controller.signal });
      controller.abort();
      const body = res[method]();
      return { order: await settleOrder(body), result: await outcome(body), state: describeResponse(res, c) };
    });

    same(
      `WPT fetch/api/abort/general.any.js "Fetch aborted & connection closed when aborted after calling response.${method}()"`,
      async (c) => {
        const controller = new AbortController();
        const res = await c.fetch(`${c.base}/trickle`, { signal: controller.signal });
        const body = res[method]();
        controller.abort();
        return { result: await outcome(body), state: describeResponse(res, c) };
      },
    );
  }

  same('WPT fetch/api/abort/general.any.js "Stream errors once aborted. Underlying connection closed."', async (c) => {
    const controller = new AbortController();
    const res = await c.fetch(`${c.base}/trickle`, { signal: controller.signal });
    const reader = res.body!.getReader();
    controller.abort();
    return { read: await outcome(reader.read()), closed: await outcome(reader.closed) };
  });

  same('WPT fetch/api/abort/general.any.js "Stream errors once aborted, after reading"', async (c) => {
    const controller = new AbortController();
    const res = await c.fetch(`${c.base}/trickle`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort(new RangeError('mine'));
    return { read: await outcome(reader.read()), closed: await outcome(reader.closed) };
  });

  // Bare fetch on Node 20 and 22 errors even an empty body here; the standard (and the wrapper,
  // whose request is over once the body has arrived) closes it.
  deviation(
    'WPT fetch/api/abort/general.any.js "Stream will not error if body is empty"',
    async (c) => {
      const controller = new AbortController();
      const res = await c.fetch(`${c.base}/empty`, { signal: controller.signal });
      const reader = res.body!.getReader();
      await turn(20);
      controller.abort();
      return outcome(reader.read(), (r) => r.done);
    },
    (_bare, timed) => expect(timed).toEqual({ fulfilled: true }),
  );

  deviation(
    'WPT fetch/api/abort/general.any.js: an abort after the whole body has arrived, before it is read, no longer errors it',
    async (c) => {
      const controller = new AbortController();
      const res = await c.fetch(`${c.base}/json`, { signal: controller.signal });
      await turn(50);
      controller.abort();
      return outcome(res.json());
    },
    (bare, timed) => {
      expect(bare).toMatchObject({ rejected: {} });
      expect(timed).toEqual({ fulfilled: { a: [1, 2], b: 'ü' } });
    },
  );

  same(
    'WPT fetch/api/abort/general.any.js "Readable stream synchronously cancels with AbortError if aborted before reading"',
    async (c) => {
      let cancelReason: unknown;
      const body = new ReadableStream({
        pull: (controller) => controller.enqueue(new Uint8Array([42])),
        cancel: (reason) => void (cancelReason = reason),
      });
      const pending = c.fetch(`${c.base}/echo`, { body, signal: AbortSignal.abort(), method: 'POST', duplex: 'half' });
      const cancelledSync = cancelReason !== undefined;
      const error = await pending.catch((e: unknown) => e);
      return { cancelledSync, sameError: error === cancelReason, result: await outcome(pending) };
    },
  );

  same('issue 13: text() twice on a response aborted mid-body', async (c) => {
    const controller = new AbortController();
    const res = await c.fetch(`${c.base}/trickle`, { signal: controller.signal });
    controller.abort(new Error('stop'));
    return [await outcome(res.text()), await outcome(res.text()), describeResponse(res, c)];
  });

  same('issue 13: blob() and formData() of an aborted response, and bodyUsed after each', async (c) => {
    const log: unknown[] = [];
    for (const method of ['blob', 'formData'] as const) {
      const controller = new AbortController();
      const res = await c.fetch(`${c.base}/trickle`, { signal: controller.signal });
      controller.abort();
      log.push(method, await outcome(res[method]() as Promise<unknown>), res.bodyUsed, describeBody(res));
    }
    return log;
  });

  same('undici test/fetch/abort.js: aborting after the body was read changes nothing', async (c) => {
    const controller = new AbortController();
    const res = await c.fetch(`${c.base}/text`, { signal: controller.signal });
    const text = await res.text();
    controller.abort();
    return { text, state: describeResponse(res, c), again: await outcome(res.text()) };
  });

  same(
    'WPT fetch/api/response/response-clone.any.js with fetch/api/abort: a clone errors with the original when aborted',
    async (c) => {
      const controller = new AbortController();
      const res = await c.fetch(`${c.base}/trickle`, { signal: controller.signal });
      const copy = res.clone();
      controller.abort(new Error('both'));
      return { original: await outcome(res.text()), copy: await outcome(copy.text()) };
    },
  );

  same('WPT fetch/api/abort/request.any.js: the Request signal of a fetch input follows its controller', async (c) => {
    const controller = new AbortController();
    const request = new c.Request(`${c.base}/hang`, { signal: controller.signal });
    const pending = c.fetch(request);
    await turn(20);
    controller.abort('request abort');
    return {
      result: await outcome(pending),
      signal: attempt(
        () => request.signal.aborted,
        (v) => v,
      ),
    };
  });
});
