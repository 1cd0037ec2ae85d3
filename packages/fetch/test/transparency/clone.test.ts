import { attempt, describeBody, describeResponse, differential, digest, drain, outcome } from './harness.js';

differential('transparency: clone and tee', (same) => {
  same('WPT fetch/api/response/response-clone.any.js "Cloned responses should provide the same data"', async (c) => {
    const res = await c.fetch(`${c.base}/text`);
    const copy = res.clone();
    return {
      copy: describeResponse(copy, c),
      texts: await Promise.all([res.text(), copy.text()]),
      after: [describeResponse(res, c), describeResponse(copy, c)],
    };
  });

  same('WPT fetch/api/response/response-clone.any.js "Cancelling stream should not affect cloned one"', async (c) => {
    const res = await c.fetch(`${c.base}/json`);
    const copy = res.clone();
    // A tee branch's cancel() settles only once both branches are cancelled: not awaited, as in WPT.
    const cancelled = outcome(res.body!.cancel());
    const json = await copy.json();
    return { copy: json, original: describeResponse(res, c), cancelled: await cancelled };
  });

  same(
    'WPT fetch/api/response/response-clone.any.js "Check orginal response\'s body after cloning": clone after taking the body, the logging pattern',
    async (c) => {
      const res = await c.fetch(`${c.base}/text`);
      const body = res.body!;
      const copy = res.clone();
      return {
        sameBody: res.body === body,
        state: describeBody(res),
        copy: await copy.text(),
        original: await outcome(drain(res.body!)),
      };
    },
  );

  same('WPT fetch/api/response/response-clone.any.js: clone after getReader() and after reading throws', async (c) => {
    const locked = await c.fetch(`${c.base}/text`);
    const reader = locked.body!.getReader();
    const whileLocked = attempt(() => locked.clone());
    reader.releaseLock();
    const used = await c.fetch(`${c.base}/text`);
    await used.text();
    return { whileLocked, afterRead: attempt(() => used.clone()), lockedText: await outcome(locked.text()) };
  });

  same(
    'ky test/response-consumption.ts "redirected progress clones retain metadata": clone().clone() after a redirect',
    async (c) => {
      const res = await c.fetch(`${c.base}/redirect?status=302&to=/json`);
      const copy = res.clone().clone();
      return {
        copy: describeResponse(copy, c),
        json: await copy.json(),
        bodyUsed: res.bodyUsed,
        original: await res.json(),
      };
    },
  );

  for (const method of ['text', 'json', 'arrayBuffer'] as const) {
    same(
      `ky test/response-consumption.ts "${method} shortcut consumes the shared response exactly once"`,
      async (c) => {
        const res = await c.fetch(`${c.base}/json`);
        await res[method]();
        return { bodyUsed: res.bodyUsed, again: await outcome(res.text()), clone: attempt(() => res.clone()) };
      },
    );
  }

  for (const method of ['arrayBuffer', 'blob', 'bytes'] as const) {
    same(`ky test/response-consumption.ts "${method} preserves non-text bytes"`, async (c) => {
      const res = await c.fetch(`${c.base}/binary`);
      if (typeof (res as unknown as Record<string, unknown>)[method] !== 'function') return 'absent';
      const result = (await (res as unknown as Record<string, () => Promise<unknown>>)[method]()) as
        ArrayBuffer | Blob | Uint8Array;
      const bytes = result instanceof Blob ? new Uint8Array(await result.arrayBuffer()) : result;
      return { class: result.constructor.name, ...digest(bytes) };
    });
  }

  same(
    'ky source/utils/response.ts (onDownloadProgress): a Response the caller rebuilds around res.body',
    async (c) => {
      const res = await c.fetch(`${c.base}/json`);
      const seen: number[] = [];
      const reader = res.body!.getReader();
      const rebuilt = new c.Response(
        new ReadableStream({
          async pull(controller) {
            const { done, value } = await reader.read();
            if (done) controller.close();
            else {
              seen.push(value.byteLength);
              controller.enqueue(value);
            }
          },
        }),
        { status: res.status, statusText: res.statusText, headers: res.headers },
      );
      return { json: await rebuilt.json(), bytes: seen.reduce((a, b) => a + b, 0), original: describeResponse(res, c) };
    },
  );

  same(
    'node-fetch test/main.js "should allow cloning a response, and use both as stream"',
    async (c) => {
      const res = await c.fetch(`${c.base}/big`);
      const copy = res.clone();
      const [a, b] = await Promise.all([drain(res.body!), drain(copy.body!)]);
      return [a.text.length, b.text.length, a.chunkTypes, b.chunkTypes];
    },
    60_000,
  );
});
