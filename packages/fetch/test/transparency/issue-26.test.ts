import { expect } from 'vitest';
import { SilentServer } from '../helpers/silent-listeners.js';
import { attempt, differential, outcome, type AgentLike, type Context } from './harness.js';

/*
 * The cases of issue 26: undici's own fetch tests that failed with the wrapper in place of fetch
 * (a Request's own dispatcher, a bad signal, the function's name and length), and the new
 * options next to bare fetch (a retried status, a connect timeout, a limit longer than the
 * dispatcher's).
 */

/** undici test/fetch/issue-2828.js: an Agent subclass that adds a header to every request it dispatches. */
function headerAgent(c: Context): AgentLike {
  const Agent = c.Agent;
  class CustomAgent extends Agent {
    override dispatch(options: unknown, handler: unknown): boolean {
      (options as { headers: Record<string, string> | string[] }).headers = withHeader(
        (options as { headers: Record<string, string> | string[] }).headers,
      );
      return super.dispatch(options, handler);
    }
  }
  return new CustomAgent();
}

/** undici hands a dispatcher its headers as an object (undici 6) or a flat array (from undici 7). */
function withHeader(headers: Record<string, string> | string[]): Record<string, string> | string[] {
  if (Array.isArray(headers)) return [...headers, 'x-my-header', 'hello'];
  return { ...headers, 'x-my-header': 'hello' };
}

differential('transparency: issue 26', (same, deviation) => {
  same(
    'undici test/fetch/issue-2828.js "issue #2828, dispatcher is allowed in RequestInit options": a Request carries its dispatcher',
    async (c) => {
      const agent = headerAgent(c);
      try {
        const request = new c.Request(`${c.base}/echo`, { dispatcher: agent } as RequestInit);
        const res = await c.fetch(request);
        return { status: res.status, text: await res.text(), header: c.server.last.headers['x-my-header'] };
      } finally {
        await agent.close();
      }
    },
  );

  same('issue-2828 with init: init.dispatcher wins over the Request own', async (c) => {
    const agent = headerAgent(c);
    const plain = new c.Agent();
    try {
      const request = new c.Request(`${c.base}/echo`, { dispatcher: plain } as RequestInit);
      const res = await c.fetch(request, { dispatcher: agent } as RequestInit);
      return { text: await res.text(), header: c.server.last.headers['x-my-header'] };
    } finally {
      await Promise.all([agent.close(), plain.close()]);
    }
  });

  same(
    'undici test/fetch/request.js "RequestInit.signal option": a bad signal rejects in a promise with a TypeError',
    async (c) => {
      let pending: Promise<Response> | undefined;
      const call = attempt(() => (pending = c.fetch('http://asd', { signal: false } as unknown as RequestInit)));
      const settled = pending === undefined ? 'no promise' : await outcome(pending);
      const other = await outcome(() => c.fetch(`${c.base}/echo`, { signal: {} } as unknown as RequestInit));
      return { call, settled, other };
    },
  );

  same('undici test/fetch/client-fetch.js "function signature": name and length', (c) =>
    Promise.resolve({ name: c.fetch.name, length: c.fetch.length }),
  );

  same('undici test/fetch/client-fetch.js "args validation": no input, an unsupported scheme', async (c) => ({
    none: await outcome(() => (c.fetch as unknown as () => Promise<Response>)()),
    ftp: await outcome(() => c.fetch('ftp://unsupported')),
  }));

  same(
    'retry after a status (retry: { limit: 1 }): the last 503 is returned as fetch returns it, after Retry-After: 0',
    async (c) => {
      const before = c.server.received.length;
      const res = await c.withOptions({ retry: { limit: 1 } })(`${c.base}/retry-after?code=503&after=0`);
      return {
        status: res.status,
        statusText: res.statusText,
        retryAfter: res.headers.get('retry-after'),
        bodyUsed: res.bodyUsed,
        text: await res.text(),
        // Bare fetch sends once; the wrapper sends twice, which is the feature.
        sent: c.wrapped ? c.server.received.length - before - 1 : c.server.received.length - before,
      };
    },
  );

  deviation(
    'a connect timeout: connectMs ends a TLS handshake that is never answered, where bare fetch waits for its signal',
    async (c) => {
      const silent = new SilentServer();
      const port = await silent.start();
      try {
        const fetchFn = c.withOptions({ connectMs: 200, headersMs: 5_000 });
        const init = c.wrapped ? {} : { signal: AbortSignal.timeout(200) };
        const error = await outcome(() => fetchFn(`https://127.0.0.1:${port}/`, init));
        return { error, isTimeoutError: (error as { rejected?: unknown }).rejected !== undefined };
      } finally {
        await silent.stop();
      }
    },
    (bare, timed) => {
      // Bare fetch with AbortSignal.timeout: a DOMException named TimeoutError, with no phase.
      expect(bare).toMatchObject({ error: { rejected: { class: 'DOMException', name: 'TimeoutError' } } });
      expect(timed).toMatchObject({
        error: { rejected: { class: 'TimeoutError', name: 'TimeoutError', code: 23 } },
      });
    },
  );

  deviation(
    "a limit longer than the dispatcher's: headers 1 s late through an Agent whose headersTimeout is 300 ms",
    async (c) => {
      const agent = new c.Agent({ headersTimeout: 300, bodyTimeout: 300 });
      try {
        const fetchFn = c.withOptions({ headersMs: 5_000, totalMs: 10_000 });
        return await outcome(async () => {
          const res = await fetchFn(`${c.base}/late?ms=1000`, { dispatcher: agent } as RequestInit);
          return await res.text();
        });
      } finally {
        await agent.close();
      }
    },
    (bare, timed) => {
      // README "Differences from bare fetch": the wrapper's limit governs, undici's is lifted.
      expect(bare).toMatchObject({ rejected: { cause: { code: 'UND_ERR_HEADERS_TIMEOUT' } } });
      expect(timed).toEqual({ fulfilled: 'late' });
    },
  );
});
