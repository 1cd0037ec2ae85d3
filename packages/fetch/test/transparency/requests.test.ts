import { expect } from 'vitest';
import { attempt, differential, outcome, type Context } from './harness.js';

/** What reached the server for the last request, with multipart boundaries made comparable. */
function received(c: Context): unknown {
  const last = c.server.last;
  const type = String(last.headers['content-type'] ?? '');
  const boundary = /boundary=(.+)$/.exec(type)?.[1];
  const scrub = (text: string): string => (boundary === undefined ? text : text.split(boundary).join('BOUNDARY'));
  const headers = { ...last.headers };
  delete headers.connection;
  if (boundary !== undefined) headers['content-type'] = scrub(type);
  if (headers.referer !== undefined) headers.referer = String(headers.referer).replace(c.base, 'BASE');
  return { method: last.method, path: last.path, headers, body: scrub(last.body) };
}

/** Sends `input`/`init`, reads the body, and reports the response and what the server got. */
async function roundTrip(c: Context, input: string | URL | Request, init?: RequestInit): Promise<unknown> {
  const before = c.server.received.length;
  const result = await outcome(async () => {
    const res = await c.fetch(input, init);
    return { status: res.status, url: res.url.replace(c.base, 'BASE'), text: await res.text() };
  });
  return { result, server: c.server.received.length > before ? received(c) : 'no request' };
}

/** The request bodies fetch accepts, built fresh for each run. */
const BODIES: Record<string, () => unknown> = {
  string: () => 'plain text ü',
  ArrayBuffer: () => new TextEncoder().encode('array buffer').buffer,
  Uint8Array: () => new TextEncoder().encode('typed array'),
  DataView: () => new DataView(new TextEncoder().encode('data view').buffer),
  Buffer: () => Buffer.from('node buffer'),
  Blob: () => new Blob(['blob ', 'parts'], { type: 'application/x-blob' }),
  File: () => new File(['file body'], 'a.txt', { type: 'text/plain' }),
  URLSearchParams: () => new URLSearchParams({ a: '1', b: 'two words' }),
  FormData: () => {
    const form = new FormData();
    form.append('field', 'value');
    form.append('file', new Blob(['file body'], { type: 'text/plain' }), 'a.txt');
    return form;
  },
  ReadableStream: () =>
    new ReadableStream({
      start: (controller) => (controller.enqueue(new TextEncoder().encode('streamed')), controller.close()),
    }),
  'async iterable': () =>
    (async function* () {
      yield new TextEncoder().encode('iterated ');
      await Promise.resolve();
      yield new TextEncoder().encode('body');
    })(),
  null: () => null,
};

differential('transparency: requests', (same, deviation) => {
  for (const [name, make] of Object.entries(BODIES)) {
    same(
      `node-fetch test/main.js "should allow POST request with ${name} body" (WPT fetch/api/request/request-init-003.sub.html): what reaches the server`,
      async (c) => {
        const body = make();
        const stream =
          body instanceof ReadableStream || (typeof body === 'object' && body !== null && Symbol.asyncIterator in body);
        return roundTrip(c, `${c.base}/echo`, {
          method: 'POST',
          body: body as RequestInit['body'],
          ...(stream ? { duplex: 'half' } : {}),
        });
      },
    );
  }

  same('WPT fetch/api/request/request-init-001.sub.html: a string, a URL and a Request input', async (c) => [
    await roundTrip(c, `${c.base}/echo?as=string`),
    await roundTrip(c, new URL(`${c.base}/echo?as=url`)),
    await roundTrip(
      c,
      new c.Request(`${c.base}/echo?as=request`, { method: 'PUT', body: 'request body', headers: { 'x-a': '1' } }),
    ),
  ]);

  same(
    'WPT fetch/api/request/request-consume.html: a Request input is used after fetch, and cannot be fetched again',
    async (c) => {
      const request = new c.Request(`${c.base}/echo`, { method: 'POST', body: 'once' });
      const first = await roundTrip(c, request);
      return { first, bodyUsed: request.bodyUsed, again: await outcome(c.fetch(request)) };
    },
  );

  same(
    'WPT fetch/api/request/request-init-002.any.js: a Request input with an init overriding method, headers and body',
    async (c) => {
      const request = new c.Request(`${c.base}/echo`, { method: 'POST', body: 'original', headers: { 'x-a': '1' } });
      return roundTrip(c, request, { method: 'PUT', body: 'replaced', headers: { 'x-b': '2' } });
    },
  );

  same('issue 13: a Request input keeps its referrer policy; an init resets its referrer, as in fetch', async (c) => [
    await roundTrip(
      c,
      new c.Request(`${c.base}/echo?2`, { referrer: `${c.base}/page`, referrerPolicy: 'no-referrer' }),
    ),
    await roundTrip(c, new c.Request(`${c.base}/echo?3`, { referrer: `${c.base}/page` }), { method: 'GET' }),
    await roundTrip(c, `${c.base}/echo?4`, { referrer: `${c.base}/other` }),
  ]);

  // undici 7 (Node 24's fetch, undici.fetch 7) drops a Request input's referrer when fetch is
  // called without an init; undici 6 and 8 (Node 20, 22, 26) send it, as the standard says.
  deviation(
    'issue 13: a Request input keeps its referrer (sent as Referer)',
    async (c) => roundTrip(c, new c.Request(`${c.base}/echo?1`, { referrer: `${c.base}/page` })),
    (bare, timed) => {
      expect(timed).toMatchObject({ server: { headers: { referer: 'BASE/page' } } });
      const { referer: _dropped, ...bareHeaders } = (bare as { server: { headers: Record<string, unknown> } }).server
        .headers;
      const { referer: _sent, ...timedHeaders } = (timed as { server: { headers: Record<string, unknown> } }).server
        .headers;
      expect(timedHeaders).toEqual(bareHeaders);
    },
  );

  // Issue 36: with uploadIdleMs (on in every scenario here) the tap hands undici fetch's body in
  // 64 KiB pieces; a body of known length reaches the server byte for byte as bare.
  for (const [name, make] of Object.entries({
    Buffer: () => Buffer.alloc(3 * 1024 * 1024 + 7, 'b'),
    string: () => 's'.repeat(1024 * 1024 + 3),
    Blob: () => new Blob([Buffer.alloc(1024 * 1024 + 5, 'l')]),
  }))
    same(`issue 36: a ${name} body of several 64 KiB pieces reaches the server as bare`, async (c) =>
      roundTrip(c, `${c.base}/echo`, { method: 'PUT', body: make() }),
    );

  same('issue 36: a ReadableStream body of large chunks keeps its chunks (their sizes go on the wire)', async (c) =>
    roundTrip(c, `${c.base}/echo`, {
      method: 'POST',
      body: new ReadableStream({
        start: (controller) => {
          controller.enqueue(new Uint8Array(200 * 1024).fill(0x61));
          controller.enqueue(new Uint8Array(3).fill(0x62));
          controller.close();
        },
      }),
      duplex: 'half',
    }),
  );

  // Issue 35: deadlineHeader adds one header, the remaining budget; everything else is as bare.
  deviation(
    'issue 35: deadlineHeader sends the remaining budget in its header',
    async (c) =>
      roundTrip(
        c.wrapped ? { ...c, fetch: c.withOptions({ totalMs: 30_000, deadlineHeader: 'connect-timeout-ms' }) } : c,
        `${c.base}/echo`,
        { method: 'POST', body: 'budget', headers: { 'x-kept': '1' } },
      ),
    (bare, timed) => {
      const { 'connect-timeout-ms': budget, ...timedHeaders } = (
        timed as { server: { headers: Record<string, unknown> } }
      ).server.headers;
      expect(budget).toBe('30000');
      expect(timedHeaders).toEqual((bare as { server: { headers: Record<string, unknown> } }).server.headers);
      expect({ ...(timed as object), server: undefined }).toEqual({ ...(bare as object), server: undefined });
    },
  );

  same('issue 13 (ky passes inits built with Object.create): inherited init members reach fetch', async (c) => {
    const base = { method: 'POST', body: 'inherited body', headers: { 'x-inherited': 'yes' } };
    const init = Object.create(base) as RequestInit;
    return roundTrip(c, `${c.base}/echo`, init);
  });

  same('undici test/fetch/request.js: an init that is a class instance with getters', async (c) => {
    class Init {
      get method(): string {
        return 'PATCH';
      }
      get body(): string {
        return 'from a getter';
      }
    }
    return roundTrip(c, `${c.base}/echo`, new Init());
  });

  same('WPT fetch/api/request/request-headers.any.js: headers as Headers, pairs and a record', async (c) => [
    await roundTrip(c, `${c.base}/echo?1`, { headers: new Headers({ 'x-a': '1', accept: 'text/plain' }) }),
    await roundTrip(c, `${c.base}/echo?2`, {
      headers: [
        ['x-b', '2'],
        ['x-b', '3'],
      ],
    }),
    await roundTrip(c, `${c.base}/echo?3`, { headers: { 'x-c': 'ü'.normalize() === 'ü' ? 'latin' : '' } }),
  ]);

  same('WPT fetch/api/request/request-error.any.js: bad inputs reject with the same TypeError', async (c) => [
    await outcome(c.fetch('not a url')),
    await outcome(c.fetch(`${c.base}/echo`, { method: 'GET', body: 'x' })),
    await outcome(c.fetch(`${c.base}/echo`, { method: 'CONNECT' })),
    await outcome(c.fetch(`${c.base}/echo`, { headers: { 'bad header': 'x' } })),
    await outcome(c.fetch(`${c.base}/echo`, { body: new ReadableStream(), method: 'POST' })),
    await outcome(c.fetch(`${c.base}/echo`, { window: {} } as unknown as RequestInit)),
    await outcome(c.fetch('ftp://127.0.0.1/file')),
    await outcome(c.fetch(`http://user:pass@127.0.0.1:1/`)),
  ]);

  same('WPT fetch/api/request/request-disturbed.any.js: a Request whose body was read rejects', async (c) => {
    const request = new c.Request(`${c.base}/echo`, { method: 'POST', body: 'read already' });
    await request.text();
    return outcome(c.fetch(request));
  });

  same(
    'WPT fetch/api/request/request-keepalive.any.js and request-cache: init members fetch reads pass through',
    async (c) =>
      roundTrip(c, `${c.base}/echo`, {
        cache: 'no-store',
        credentials: 'omit',
        mode: 'cors',
        redirect: 'follow',
        integrity: '',
        keepalive: false,
        priority: 'high',
      } as RequestInit),
  );

  same('WPT fetch/api/abort/general.any.js: init.signal null on a string input', async (c) =>
    roundTrip(c, `${c.base}/echo`, { signal: null }),
  );

  same('undici test/fetch/client-fetch.js: the init object fetch is given is not modified', async (c) => {
    const init: RequestInit = { method: 'POST', body: 'kept', headers: { 'x-a': '1' } };
    const keys = Object.keys(init);
    await roundTrip(c, `${c.base}/echo`, init);
    return {
      keys: Object.keys(init),
      same: JSON.stringify(keys) === JSON.stringify(Object.keys(init)),
      signal: attempt(
        () => init.signal,
        (v) => v ?? 'absent',
      ),
    };
  });
});
