import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TimingWheel, withDeadline } from '@tickwheel/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_IMPLEMENTATIONS } from '../helpers/fetch-implementations.js';
import { PendingTimers } from '../helpers/http-server.js';

/*
 * deadlineHeader (issue 35, "HTTP to HTTP"): each attempt tells the server, in the named header,
 * how long this caller still waits, so services A → B → C over HTTP share one budget as gRPC
 * services share grpc-timeout. A real node:http server records what it received.
 */
const HEADER = 'connect-timeout-ms';

/** Records the header of every request; `/slow?ms=N` answers after N ms, `/` at once. */
class HeaderServer {
  readonly seen: Array<string | undefined> = [];
  private readonly pending = new PendingTimers();
  private readonly server = http.createServer((req, res) => {
    this.seen.push(req.headers[HEADER] as string | undefined);
    const ms = Number(new URL(req.url!, 'http://x').searchParams.get('ms') ?? 0);
    if (ms === 0) res.end('ok');
    else this.pending.later(ms, () => res.end('late'));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.pending.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe.each(FETCH_IMPLEMENTATIONS.map((impl) => [impl.name, impl] as const))(
  'deadlineHeader of withTimeouts(%s)',
  (_name, impl) => {
    const server = new HeaderServer();
    let base = '';
    let wheel: TimingWheel;
    beforeAll(async () => {
      base = await server.start();
    });
    afterAll(() => server.stop());
    afterEach(() => {
      server.seen.length = 0;
      expect(wheel.size).toBe(0);
      wheel.close();
    });

    it("sends the attempt's totalMs, in whole ms, when that is all that bounds it", async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, { totalMs: 5_000, deadlineHeader: HEADER, wheel });
      await (await timed(`${base}/`)).text();
      expect(server.seen).toEqual(['5000']);
    });

    it('sends what is left of the ambient deadline, less reserveMs, when that ends first', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, { totalMs: 60_000, reserveMs: 500, deadlineHeader: HEADER, wheel });
      await withDeadline(3_000, async () => (await timed(`${base}/`)).text());
      const sent = Number(server.seen[0]);
      expect(Number.isInteger(sent)).toBe(true);
      expect(sent).toBeLessThanOrEqual(2_500);
      expect(sent).toBeGreaterThan(1_000);
    });

    it('sends a smaller budget with each retry', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, {
        headersMs: 200,
        deadlineHeader: HEADER,
        wheel,
        retry: { limit: 2, backoffMs: 50, budgetMs: 10_000 },
      });
      await expect(timed(`${base}/slow?ms=2000`)).rejects.toMatchObject({ name: 'TimeoutError', phase: 'headers' });
      const [first, second, third] = server.seen.map(Number) as [number, number, number];
      expect(server.seen).toHaveLength(3);
      expect(first).toBeLessThanOrEqual(10_000);
      // Each attempt waited 200 ms for its headers and 50 or 100 ms before the retry.
      expect(second).toBeLessThanOrEqual(first - 250);
      expect(third).toBeLessThanOrEqual(second - 300);
    });

    it('sends nothing when no limit, retry budget or deadline bounds the request', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, { headersMs: 1_000, bodyIdleMs: 1_000, deadlineHeader: HEADER, wheel });
      await (await timed(`${base}/`)).text();
      expect(server.seen).toEqual([undefined]);
    });

    it("keeps the caller's own value of the header when it is smaller, and replaces a larger or malformed one", async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, { totalMs: 5_000, deadlineHeader: HEADER, wheel });
      for (const theirs of ['1200', '90000', 'soon'])
        await (await timed(`${base}/`, { headers: { [HEADER]: theirs, 'x-other': 'kept' } })).text();
      expect(server.seen).toEqual(['1200', '5000', '5000']);
    });

    it("keeps a Request input's own headers beside the budget", async () => {
      wheel = new TimingWheel();
      let other: string | undefined;
      const timed = withTimeouts(impl.fetch, { totalMs: 5_000, deadlineHeader: HEADER, wheel });
      const probe = http.createServer((req, res) => {
        other = req.headers['x-other'] as string | undefined;
        server.seen.push(req.headers[HEADER] as string | undefined);
        res.end('ok');
      });
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/`;
        await (await timed(new impl.Request(url, { headers: { 'x-other': 'kept' } }))).text();
      } finally {
        probe.closeAllConnections();
        await new Promise<void>((resolve) => probe.close(() => resolve()));
      }
      expect(other).toBe('kept');
      expect(server.seen).toEqual(['5000']);
    });
  },
);
