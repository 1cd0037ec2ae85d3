import { Readable } from 'node:stream';
import { attempt, describeBody, describeResponse, differential, digest, drain, outcome, turn } from './harness.js';

/** Every body method of a Response, and what each resolves to, as comparable data. */
const BODY_METHODS = {
  text: (res: Response) => res.text(),
  json: (res: Response) => res.json(),
  arrayBuffer: async (res: Response) => {
    const buffer = await res.arrayBuffer();
    return { class: buffer.constructor.name, ...digest(buffer) };
  },
  bytes: async (res: Response) => {
    const bytes = await (res as Response & { bytes(): Promise<Uint8Array> }).bytes();
    return {
      class: bytes.constructor.name,
      ...digest(bytes),
      ownsBuffer: bytes.byteLength === bytes.buffer.byteLength,
    };
  },
  blob: async (res: Response) => {
    const blob = await res.blob();
    return { class: blob.constructor.name, type: blob.type, size: blob.size, text: await blob.text() };
  },
  formData: async (res: Response) => {
    const form = await res.formData();
    return [...form].map(([name, value]) => [
      name,
      typeof value === 'string' ? value : { file: value.name, type: value.type, size: value.size },
    ]);
  },
} as const;
type BodyMethod = keyof typeof BODY_METHODS;

const METHOD_ROUTES: Record<BodyMethod, string> = {
  text: '/text',
  json: '/json',
  arrayBuffer: '/text',
  bytes: '/text',
  blob: '/text',
  formData: '/urlencoded',
};

differential('transparency: response bodies', (same) => {
  for (const method of Object.keys(BODY_METHODS) as BodyMethod[]) {
    same(
      `WPT fetch/api/response/response-consume.html: ${method}() of a response, then the body state and a second read`,
      async (c) => {
        const res = await c.fetch(c.base + METHOD_ROUTES[method]);
        if (typeof (res as unknown as Record<string, unknown>)[method] !== 'function') return { method, absent: true };
        const before = describeResponse(res, c);
        const first = await outcome(BODY_METHODS[method](res));
        return {
          before,
          first,
          after: describeResponse(res, c),
          second: await outcome(BODY_METHODS[method](res)),
          getReader: attempt(() => res.body?.getReader()),
        };
      },
    );
  }

  same('WPT fetch/api/response/response-consume-empty.any.js: every body method of an empty body', async (c) => {
    const log: unknown[] = [];
    for (const method of Object.keys(BODY_METHODS) as BodyMethod[]) {
      const res = await c.fetch(`${c.base}/empty`);
      if (typeof (res as unknown as Record<string, unknown>)[method] !== 'function') continue;
      log.push(method, describeResponse(res, c), await outcome(BODY_METHODS[method](res)));
    }
    return log;
  });

  same(
    'node-fetch test/main.js "should reject if response body is not valid json": json() of a broken body',
    async (c) => {
      const res = await c.fetch(`${c.base}/bad-json`);
      return [await outcome(res.json()), res.bodyUsed];
    },
  );

  same('WPT fetch/api/body/formdata.any.js: formData() of a multipart body', async (c) => {
    const res = await c.fetch(`${c.base}/multipart`);
    return outcome(BODY_METHODS.formData(res));
  });

  same(
    'WPT fetch/api/body/mime-type.any.js: blob() keeps the Content-Type; formData() of text/plain rejects',
    async (c) => {
      const blob = await outcome(BODY_METHODS.blob(await c.fetch(`${c.base}/json`)));
      const form = await outcome(BODY_METHODS.formData(await c.fetch(`${c.base}/text`)));
      return { blob, form };
    },
  );

  same(
    'WPT fetch/api/response/response-stream-disturbed-4.any.js: body methods after getReader() on the body',
    async (c) => {
      const log: unknown[] = [];
      for (const method of Object.keys(BODY_METHODS) as BodyMethod[]) {
        const res = await c.fetch(c.base + METHOD_ROUTES[method]);
        if (typeof (res as unknown as Record<string, unknown>)[method] !== 'function') continue;
        const reader = res.body!.getReader();
        log.push(method, describeBody(res), await outcome(BODY_METHODS[method](res)), res.bodyUsed);
        log.push(await outcome(reader.read(), (r) => ({ done: r.done, text: new TextDecoder().decode(r.value) })));
      }
      return log;
    },
  );

  same('WPT fetch/api/response/response-stream-disturbed-5.any.js: body methods after reading the body', async (c) => {
    const res = await c.fetch(`${c.base}/text`);
    const reader = res.body!.getReader();
    const read = await drain(
      new ReadableStream({
        pull: async (ctl) => {
          const { done, value } = await reader.read();
          if (done) ctl.close();
          else ctl.enqueue(value);
        },
      }),
    );
    reader.releaseLock();
    return {
      read,
      state: describeResponse(res, c),
      text: await outcome(res.text()),
      getReader: attempt(() => res.body!.getReader()),
    };
  });

  same(
    'WPT fetch/api/response/response-stream-disturbed-1.any.js: body getter after text(): same stream, locked, getReader() throws',
    async (c) => {
      const res = await c.fetch(`${c.base}/text`);
      await res.text();
      return {
        body: describeBody(res),
        getReader: attempt(() => res.body!.getReader()),
        cancel: await outcome(res.body!.cancel()),
      };
    },
  );

  same(
    'WPT fetch/api/response/response-consume-stream.any.js: reading the body with a reader and with for await',
    async (c) => {
      const viaReader = await drain((await c.fetch(`${c.base}/text`)).body!);
      const res = await c.fetch(`${c.base}/json`);
      let text = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        text += new TextDecoder().decode(chunk);
      return { viaReader, text, after: describeResponse(res, c) };
    },
  );

  same('WPT fetch/api/response/response-consume-stream.any.js: a BYOB reader on the body stream', async (c) => {
    const res = await c.fetch(`${c.base}/text`);
    return outcome(async () => {
      const reader = (res.body as ReadableStream<Uint8Array>).getReader({ mode: 'byob' });
      const { value } = await reader.read(new Uint8Array(5));
      return new TextDecoder().decode(value);
    });
  });

  same('WPT fetch/api/response/response-cancel-stream.any.js: cancelling the body, then reading it', async (c) => {
    const res = await c.fetch(`${c.base}/trickle`);
    const cancelled = await outcome(res.body!.cancel('not interested'));
    return { cancelled, state: describeResponse(res, c), text: await outcome(res.text()) };
  });

  same(
    'issue 13 (APM agents, mocks): a Response.prototype.text patched after the response arrived is what callers run',
    async (c) => {
      const res = await c.fetch(`${c.base}/text`);
      const descriptor = Object.getOwnPropertyDescriptor(c.Response.prototype, 'text')!;
      const original = descriptor.value as (this: Response) => Promise<string>;
      const calls: unknown[] = [];
      Object.defineProperty(c.Response.prototype, 'text', {
        ...descriptor,
        value: function text(this: Response) {
          calls.push(this === res);
          return original.call(this);
        },
      });
      try {
        return { text: await res.text(), calls };
      } finally {
        Object.defineProperty(c.Response.prototype, 'text', descriptor);
      }
    },
  );

  same('undici test/fetch/client-fetch.js (Readable.fromWeb): a Node stream over res.body, then text()', async (c) => {
    const res = await c.fetch(`${c.base}/json`);
    const readable = Readable.fromWeb(res.body as never);
    const chunks: Buffer[] = [];
    for await (const chunk of readable) chunks.push(Buffer.from(chunk as Uint8Array));
    return {
      text: Buffer.concat(chunks).toString(),
      after: describeResponse(res, c),
      later: await outcome(res.text()),
    };
  });

  same(
    'undici test/fetch/client-fetch.js: a Node stream over res.body that is not read yet, then text()',
    async (c) => {
      const res = await c.fetch(`${c.base}/json`);
      const readable = Readable.fromWeb(res.body as never);
      const later = await outcome(res.text());
      readable.destroy();
      await turn();
      return { later, body: describeBody(res) };
    },
  );

  same('WPT fetch/api/response/response-init-002.any.js: headers of a fetched response are immutable', async (c) => {
    const res = await c.fetch(`${c.base}/text`);
    const result = [
      attempt(() => res.headers.set('x-added', '1')),
      attempt(() => res.headers.delete('x-custom')),
      res.headers.get('x-custom'),
    ];
    await res.text();
    return result;
  });
});
