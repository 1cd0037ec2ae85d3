// serverTimeouts on node:http: headersMs, bodyIdleMs and keepAliveMs on a ManualClock wheel, and the server limits they lift.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { get, loopback, turns } from '../helpers/loopback.js';
import { timedServer } from '../helpers/timed-server.js';

const net = loopback();

/** A POST head announcing `length` body bytes. */
function post(path: string, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${length}\r\n\r\n`;
}

describe('headersMs', () => {
  it("answers Node's own 408 and closes when the head is not complete in time, exactly on the wheel", async () => {
    const t = await timedServer(net, (_req, res) => res.end('ok'), { headersMs: 500 });
    const client = await net.connect(t.port);
    client.write('GET / HTTP/1.1\r\nHost: local');
    await turns();
    t.clock.advance(499);
    await turns();
    expect(client.closed).toBe(false);
    t.clock.advance(1);
    expect(await client.whenClosed()).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    expect(t.events).toEqual([
      { kind: 'headers', limitMs: 500, outcome: 'answered', req: undefined, propagated: false },
    ]);
  });

  it('lets a connection whose head came in time run its request past headersMs', async () => {
    let finish!: () => void;
    const t = await timedServer(net, (_req, res) => (finish = () => res.end('late but fine')), { headersMs: 100 });
    const client = await net.connect(t.port);
    client.write(get('/'));
    await t.arrived();
    t.clock.advance(10_000);
    finish();
    await client.waitFor(/late but fine$/);
    expect(t.events).toEqual([]);
  });

  it('times the next head on a keep-alive connection from its first bytes', async () => {
    const t = await timedServer(net, (req, res) => res.end(req.url), { headersMs: 100 });
    const client = await net.connect(t.port);
    client.write(get('/one'));
    await client.waitFor(/\/one$/);
    t.clock.advance(10_000); // idle, no byte: no head is late
    await turns();
    expect(client.closed).toBe(false);
    client.write('GET /two HTTP/1.1\r\n');
    await turns();
    t.clock.advance(100); // the idle check sees the bytes: the head is on its way
    await turns();
    expect(client.closed).toBe(false);
    t.clock.advance(100);
    expect(await client.whenClosed()).toMatch(/408 Request Timeout\r\nConnection: close\r\n\r\n$/);
  });

  it("lifts the server's own headersTimeout while attached and restores it on stop()", async () => {
    const server = http.createServer();
    server.headersTimeout = 1_234;
    server.requestTimeout = 5_678;
    server.keepAliveTimeout = 910;
    const t = await timedServer(net, () => {}, { headersMs: 100 }, server);
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([0, 5_678, 910]);
    t.timeouts.stop();
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([1_234, 5_678, 910]);
  });

  it('leaves an upgraded connection (a WebSocket) alone', async () => {
    const server = http.createServer();
    const upgraded: Array<{ destroy(): void }> = [];
    server.on('upgrade', (_req, socket) => {
      upgraded.push(socket);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n');
    });
    const t = await timedServer(net, () => {}, { headersMs: 100, keepAliveMs: 100, bodyIdleMs: 100 }, server);
    const client = await net.connect(t.port);
    client.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n');
    await client.waitFor(/101 Switching Protocols/);
    t.clock.advance(60_000);
    await turns();
    expect(client.closed).toBe(false);
    expect(t.events).toEqual([]);
    for (const socket of upgraded) socket.destroy();
  });
});

describe('bodyIdleMs', () => {
  it('ends an upload that stalls while the handler reads it: 408 before the response started', async () => {
    const t = await timedServer(net, (req) => req.on('data', () => {}), { bodyIdleMs: 400 });
    const client = await net.connect(t.port);
    client.write(post('/upload', 10) + '12345');
    await turns();
    // Four silent quarters in a row; the answer comes on the fourth.
    for (let i = 0; i < 3; i++) {
      t.clock.advance(100);
      await turns();
    }
    expect(client.closed).toBe(false);
    t.clock.advance(100);
    const got = await client.whenClosed();
    expect(got).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(got).toContain('Request Timeout: the request body was idle too long\n');
    expect(t.events.map((e) => [e.kind, e.limitMs, e.outcome])).toEqual([['body-idle', 400, 'answered']]);
  });

  it('lets an upload that keeps moving live as long as it moves', async () => {
    let received = 0;
    const t = await timedServer(
      net,
      (req, res) => {
        req.on('data', (chunk: Buffer) => (received += chunk.length));
        req.on('end', () => res.end(`got ${received}`));
      },
      { bodyIdleMs: 400 },
    );
    const client = await net.connect(t.port);
    client.write(post('/upload', 40));
    for (let i = 0; i < 40; i++) {
      client.write('x');
      await turns();
      t.clock.advance(100);
      await turns();
    }
    await client.waitFor(/got 40$/);
    expect(t.events).toEqual([]);
  });

  it('does not count time the handler spends not reading', async () => {
    let resume!: () => void;
    const t = await timedServer(
      net,
      (req, res) => {
        req.pause();
        resume = () => {
          req.on('data', () => {});
          req.on('end', () => res.end('read it all'));
          req.resume();
        };
      },
      { bodyIdleMs: 400 },
    );
    const client = await net.connect(t.port);
    client.write(post('/upload', 4) + '12');
    await turns();
    for (let i = 0; i < 20; i++) {
      t.clock.advance(100);
      await turns();
    }
    expect(client.closed).toBe(false);
    resume();
    client.write('34');
    await client.waitFor(/read it all$/);
    expect(t.events).toEqual([]);
  });

  it('cuts the connection when the response had started', async () => {
    const t = await timedServer(
      net,
      (req, res) => {
        res.writeHead(200);
        res.write('echo:');
        req.on('data', (chunk: Buffer) => res.write(chunk));
      },
      { bodyIdleMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(post('/echo', 10) + 'abc');
    await client.waitFor(/abc/);
    for (let i = 0; i < 4; i++) {
      t.clock.advance(25);
      await turns();
    }
    const got = await client.whenClosed();
    expect(got.endsWith('0\r\n\r\n')).toBe(false);
    expect(t.events.map((e) => [e.kind, e.outcome])).toEqual([['body-idle', 'cut']]);
  });

  it("lifts the server's own requestTimeout while attached", async () => {
    const server = http.createServer();
    await timedServer(net, () => {}, { bodyIdleMs: 100 }, server);
    expect(server.requestTimeout).toBe(0);
  });
});

describe('keepAliveMs', () => {
  it('closes a keep-alive connection idle for keepAliveMs, and advertises it as the bare server would', async () => {
    const t = await timedServer(net, (_req, res) => res.end('ok'), { keepAliveMs: 5_000 });
    expect(t.server.keepAliveTimeout).toBe(0);
    const client = await net.connect(t.port);
    client.write(get('/'));
    const got = await client.waitFor(/ok$/);
    expect(got).toContain('Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n');
    t.clock.advance(4_999);
    await turns();
    expect(client.closed).toBe(false);
    t.clock.advance(1);
    await client.whenClosed();
    expect(t.events).toEqual([
      { kind: 'keep-alive', limitMs: 5_000, outcome: 'closed', req: undefined, propagated: false },
    ]);
  });

  it('does not time a connection while a request is in flight', async () => {
    let finish!: () => void;
    const t = await timedServer(net, (_req, res) => (finish = () => res.end('slow')), { keepAliveMs: 100 });
    const client = await net.connect(t.port);
    client.write(get('/'));
    await t.arrived();
    t.clock.advance(1_000);
    await turns();
    expect(client.closed).toBe(false);
    finish();
    await client.waitFor(/slow$/);
    t.clock.advance(100);
    await client.whenClosed();
  });

  it('serves the next request that arrives within keepAliveMs', async () => {
    const t = await timedServer(net, (req, res) => res.end(req.url), { keepAliveMs: 100 });
    const client = await net.connect(t.port);
    for (const path of ['/a', '/b', '/c']) {
      client.write(get(path));
      await client.waitFor(new RegExp(`${path}$`));
      t.clock.advance(99);
      await turns();
    }
    expect(client.closed).toBe(false);
  });
});
