// What the client got is what the app sees: after a timeout answer, res.headersSent, res.statusCode and 'finish' agree with the bytes, so morgan and pino-http log the 503 and its duration.
import http from 'node:http';
import { Writable } from 'node:stream';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import express5 from 'express';
import express4 from 'express4';
import morgan from 'morgan';
import { pinoHttp } from 'pino-http';
import { describe, expect, it } from 'vitest';
import { deadline } from '../../src/express.js';
import { arrivals, get, loopback } from '../helpers/loopback.js';
import { timedServer } from '../helpers/timed-server.js';

const net = loopback();

/** A writable that keeps each line written to it. */
function lines(): { stream: Writable; lines: string[]; next: () => Promise<string> } {
  const written: string[] = [];
  const waiters: Array<() => void> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(...chunk.toString().split('\n').filter(Boolean));
      for (const wake of waiters.splice(0)) wake();
      done();
    },
  });
  return {
    stream,
    lines: written,
    async next() {
      while (written.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
      return written[0];
    },
  };
}

describe('the response after a timeout answer', () => {
  it("says what the client got: headersSent, statusCode and 'finish' as for the bytes sent", async () => {
    const seen: unknown[] = [];
    const t = await timedServer(
      net,
      (_req, res) => {
        res.setHeader('x-before', 'set by the handler');
        res.on('finish', () => seen.push({ headersSent: res.headersSent, statusCode: res.statusCode }));
      },
      { defaultTimeoutMs: 1_000, timeoutStatus: 504 },
    );
    const client = await net.connect(t.port);
    client.write(get('/slow'));
    await t.arrived();
    t.clock.advance(1_000);
    const got = await client.whenClosed();
    expect(got).toMatch(/^HTTP\/1\.1 504 Gateway Timeout\r\n/);
    expect(got).not.toContain('x-before');
    expect(got).toContain('Connection: close\r\n');
    expect(got).toContain("Gateway Timeout: the request's deadline passed\n");
    expect(seen).toEqual([{ headersSent: true, statusCode: 504 }]);
  });

  it('is logged by morgan with the status the client got and its duration (express 5 and 4)', async () => {
    for (const express of [express5, express4] as unknown as Array<typeof express5>) {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const log = lines();
      const app = express();
      app.use(morgan(':method :url :status :res[content-length] :response-time', { stream: log.stream }));
      app.use(deadline({ timeoutMs: 1_000, wheel }));
      let late!: () => void;
      app.get('/slow', (_req, res) => {
        late = () => res.status(200).json({ late: true });
      });
      const server = http.createServer(app);
      const arrived = arrivals(server);
      const port = await net.listen(server);
      const client = await net.connect(port);
      client.write(get('/slow'));
      await arrived();
      clock.advance(1_000);
      expect(await client.whenClosed()).toMatch(/^HTTP\/1\.1 503 /);
      expect(await log.next()).toMatch(/^GET \/slow 503 \d+ \d+\.\d{3}$/);
      expect(late).not.toThrow();
      expect(log.lines).toHaveLength(1);
    }
  });

  it('is logged by pino-http with the status the client got and its response time', async () => {
    const log = lines();
    const logger = pinoHttp({ stream: log.stream });
    const t = await timedServer(net, (req, res) => logger(req, res), { defaultTimeoutMs: 2_000 });
    const client = await net.connect(t.port);
    client.write(get('/slow'));
    await t.arrived();
    t.clock.advance(2_000);
    expect(await client.whenClosed()).toMatch(/^HTTP\/1\.1 503 /);
    const entry = JSON.parse(await log.next()) as {
      res: { statusCode: number };
      responseTime: number;
      err: { message: string };
    };
    expect(entry.res.statusCode).toBe(503);
    expect(entry.responseTime).toBeGreaterThanOrEqual(0);
    expect(entry.err.message).toBe('failed with status code 503');
  });
});
