import { describe, expect, it } from 'vitest';
import { WebSocket, type WebSocketServer } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import type { HeartbeatOptions } from '../../src/types.js';
import { EVERY_OPTION } from '../helpers/option-sets.js';
import { closeAll, connect, next, sleep, startServer, waitFor } from '../helpers/servers.js';

// Tests adapted from ws's own suite (github:websockets/ws, test/websocket.test.js and
// test/websocket-server.test.js), run twice: on a bare WebSocketServer and on one with a
// heartbeat whose interval does not come due during the scenario. Everything the application
// and the peer observe (events, their order and payloads, close codes, ready states, the
// listeners ws reports) must be the same. Each title names the test it comes from.

type Log = string[];
type Scenario = (wss: WebSocketServer, url: string, log: Log) => Promise<void>;

/** Runs `scenario` bare and under a heartbeat with `options`, and returns both logs. */
async function differential(
  scenario: Scenario,
  options: HeartbeatOptions = { pingIntervalMs: 60_000 },
): Promise<{ bare: Log; wrapped: Log }> {
  const logs: Log[] = [];
  for (const wrapped of [false, true]) {
    const { wss, url } = await startServer();
    const beat = wrapped ? heartbeat(wss, options) : undefined;
    const log: Log = [];
    try {
      await scenario(wss, url, log);
    } finally {
      beat?.stop();
      await closeAll();
    }
    logs.push(log);
  }
  return { bare: logs[0], wrapped: logs[1] };
}

/** Records a socket's events into the log, with `who` as a prefix. */
function record(ws: WebSocket, who: string, log: Log): void {
  ws.on('ping', (data: Buffer) => log.push(`${who} ping ${data.toString()}`));
  ws.on('pong', (data: Buffer) => log.push(`${who} pong ${data.toString()}`));
  ws.on('message', (data: Buffer, isBinary: boolean) => log.push(`${who} message ${data.toString()} ${isBinary}`));
  ws.on('close', (code: number, reason: Buffer) =>
    log.push(`${who} close ${code} ${reason.toString()} readyState=${ws.readyState}`),
  );
  ws.on('error', (err: Error) => log.push(`${who} error ${err.message}`));
}

function nextConnection(wss: WebSocketServer): Promise<WebSocket> {
  return next<WebSocket>(wss, 'connection');
}

/** One connection: the client, and the server's side of it. */
async function pair(wss: WebSocketServer, url: string): Promise<{ client: WebSocket; server: WebSocket }> {
  const accepted = nextConnection(wss);
  const client = await connect(url);
  return { client, server: await accepted };
}

describe('differential: bare ws vs ws with a heartbeat', () => {
  it("emits a 'ping' event (source: ws test/websocket.test.js, \"emits a 'ping' event\")", async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const { client, server } = await pair(wss, url);
      record(client, 'client', log);
      server.ping('p');
      server.close();
      await next(client, 'close');
    });
    expect(bare).toEqual(['client ping p', 'client close 1005  readyState=3']);
    expect(wrapped).toEqual(bare);
  });

  it("emits a 'pong' event (source: ws test/websocket.test.js, \"emits a 'pong' event\")", async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const { client, server } = await pair(wss, url);
      record(client, 'client', log);
      server.pong('q');
      server.close();
      await next(client, 'close');
    });
    expect(bare).toEqual(['client pong q', 'client close 1005  readyState=3']);
    expect(wrapped).toEqual(bare);
  });

  it('#pong is called automatically when a ping is received (source: ws test/websocket.test.js, "#pong is called automatically when a ping is received")', async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const { client, server } = await pair(wss, url);
      record(server, 'server', log);
      record(client, 'client', log);
      client.ping('hi');
      await next(client, 'pong');
      server.close();
      await Promise.all([next(server, 'close'), next(client, 'close')]);
    });
    // The two close events race each other; the rest is ordered.
    expect(bare.slice(0, 2)).toEqual(['server ping hi', 'client pong hi']);
    expect(bare.slice(2).sort()).toEqual(['client close 1005  readyState=3', 'server close 1005  readyState=3']);
    expect(wrapped.slice(0, 2)).toEqual(bare.slice(0, 2));
    expect(wrapped.slice(2).sort()).toEqual(bare.slice(2).sort());
  });

  it('#close works when close reason is specified (source: ws test/websocket.test.js, "#close works when close reason is specified")', async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const { client, server } = await pair(wss, url);
      record(server, 'server', log);
      client.close(1000, 'some reason');
      await next(server, 'close');
    });
    expect(bare).toEqual(['server close 1000 some reason readyState=3']);
    expect(wrapped).toEqual(bare);
  });

  it('#close sends the close status code only when necessary (source: ws test/websocket.test.js, "#close sends the close status code only when necessary")', async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const { client, server } = await pair(wss, url);
      record(server, 'server', log);
      record(client, 'client', log);
      server.close();
      await Promise.all([next(server, 'close'), next(client, 'close')]);
    });
    expect(bare).toContain('server close 1005  readyState=3');
    expect(wrapped.sort()).toEqual(bare.sort());
  });

  it('#terminate sets readyState to CLOSED once the connection is terminated (source: ws test/websocket.test.js, "readyState is set to `CLOSED` once connection is terminated")', async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const { client, server } = await pair(wss, url);
      record(server, 'server', log);
      record(client, 'client', log);
      server.terminate();
      await Promise.all([next(server, 'close'), next(client, 'close')]);
    });
    expect(bare.sort()).toEqual(['client close 1006  readyState=3', 'server close 1006  readyState=3']);
    expect(wrapped.sort()).toEqual(bare);
  });

  it('echoes messages both ways and leaves the on{close,error,message,open} attributes alone (source: ws test/websocket.test.js, "works like the `EventEmitter` interface")', async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const { client, server } = await pair(wss, url);
      server.on('message', (msg: Buffer, isBinary: boolean) => server.send(msg, { binary: isBinary }));
      log.push(`attributes ${[server.onmessage, server.onclose, server.onerror, server.onopen].map(String).join(',')}`);
      log.push(`listeners message=${server.listenerCount('message')} ping=${server.listenerCount('ping')}`);
      client.onmessage = (event) => log.push(`client onmessage ${(event.data as Buffer).toString()}`);
      const closed = new Promise<void>((resolve) => {
        client.onclose = (event) => {
          log.push(`client onclose ${event.wasClean} ${event.code} ${event.reason}`);
          resolve();
        };
      });
      client.send('foo');
      await waitFor(() => log.some((line) => line.startsWith('client onmessage')), 2_000, 'the echo');
      client.close();
      await closed;
    });
    expect(bare).toEqual([
      'attributes null,null,null,null',
      'listeners message=1 ping=0',
      'client onmessage foo',
      'client onclose true 1005 ',
    ]);
    expect(wrapped).toEqual(bare);
  });

  it('#clients is updated when a client terminates or closes the connection (source: ws test/websocket-server.test.js, "#clients is updated when client terminates the connection", "... closes the connection")', async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const a = await connect(url);
      const b = await connect(url);
      await waitFor(() => wss.clients.size === 2, 2_000, 'two clients');
      log.push(`clients ${wss.clients.size}`);
      a.terminate();
      await waitFor(() => wss.clients.size === 1, 2_000, 'one client');
      log.push(`clients ${wss.clients.size}`);
      b.close();
      await waitFor(() => wss.clients.size === 0, 2_000, 'no client');
      log.push(`clients ${wss.clients.size}`);
    });
    expect(bare).toEqual(['clients 2', 'clients 1', 'clients 0']);
    expect(wrapped).toEqual(bare);
  });

  it("emits the server's 'close' event after the server closes (source: ws test/websocket-server.test.js, \"#close emits the 'close' event after the server closes\")", async () => {
    const { bare, wrapped } = await differential(async (wss, url, log) => {
      const client = await connect(url);
      record(client, 'client', log);
      wss.on('close', () => log.push('server closed'));
      for (const ws of wss.clients) ws.close(1001);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await sleep(20);
    });
    expect(bare).toContain('server closed');
    expect(bare).toContain('client close 1001  readyState=3');
    expect(wrapped.sort()).toEqual(bare.sort());
  });

  it('with keepaliveMs too long to fire: echoes both ways, pings, closes, and the sockets\' own keys, as bare (source: ws test/websocket.test.js, "works like the `EventEmitter` interface", "emits a \'ping\' event")', async () => {
    const { bare, wrapped } = await differential(
      async (wss, url, log) => {
        const { client, server } = await pair(wss, url);
        record(client, 'client', log);
        server.on('message', (msg: Buffer, isBinary: boolean) => server.send(msg, { binary: isBinary }));
        log.push(`server keys ${Reflect.ownKeys(server).map(String).join(',')}`);
        log.push(`send own ${Object.prototype.hasOwnProperty.call(server, 'send')}`);
        client.send('foo');
        client.send(Buffer.from([1, 2]), { binary: true });
        server.ping('hi');
        await waitFor(() => log.filter((line) => line.startsWith('client ')).length >= 3, 2_000, 'echoes and ping');
        const closed = next(client, 'close');
        server.close(4001, 'bye');
        await closed;
        log.push(`server keys after ${Reflect.ownKeys(server).map(String).join(',')}`);
      },
      { pingIntervalMs: 60_000, keepaliveMs: 60_000, keepaliveMessage: 'keepalive' },
    );
    expect(bare).toContain('client message foo false');
    expect(bare).toContain('client message \u0001\u0002 true');
    expect(bare).toContain('client ping hi');
    expect(bare).toContain('client close 4001 bye readyState=3');
    expect(wrapped).toEqual(bare);
  });
});

describe('listeners removed by the user, on real ws', () => {
  it('keeps a healthy client alive after the server socket loses every listener, and forgets it once it closes', async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { pingIntervalMs: 40, pongTimeoutMs: 30 });
    try {
      const accepted = nextConnection(wss);
      const client = await connect(url);
      let pings = 0;
      client.on('ping', () => pings++);
      const server = await accepted;
      server.removeAllListeners();
      await waitFor(() => pings >= 4, 3_000, 'four rounds of pings');
      expect(client.readyState).toBe(WebSocket.OPEN);
      expect(beat.stats().dead).toBe(0);
      client.close();
      await waitFor(() => beat.size === 0, 2_000, 'the record to go');
    } finally {
      beat.stop();
      await closeAll();
    }
  });

  it("watches connections that arrive after wss.removeAllListeners('connection')", async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { pingIntervalMs: 40, pongTimeoutMs: 30 });
    try {
      wss.removeAllListeners('connection');
      wss.on('connection', () => {});
      const client = await connect(url);
      let pings = 0;
      client.on('ping', () => pings++);
      await waitFor(() => pings >= 2, 3_000, 'two pings');
      expect(beat.size).toBe(1);
    } finally {
      beat.stop();
      await closeAll();
    }
  });
});

describe('differential: every option, its limits too long to fire', () => {
  for (const [name, options] of Object.entries(EVERY_OPTION)) {
    it(`echoes, pings and closes as bare ws with ${name} (source: ws test/websocket.test.js, "#close works when close reason is specified")`, async () => {
      const { bare, wrapped } = await differential(async (wss, url, log) => {
        wss.on('connection', (server: WebSocket) => {
          record(server, 'server', log);
          server.on('message', (data: Buffer, isBinary: boolean) => server.send(data, { binary: isBinary }));
        });
        const client = await connect(url);
        record(client, 'client', log);
        client.send('foo');
        await next(client, 'message');
        client.ping('p');
        await next(client, 'pong');
        client.close(1000, 'some reason');
        await next(client, 'close');
        await waitFor(() => wss.clients.size === 0, 2_000, 'the server side to close');
      }, options);
      expect(wrapped.sort()).toEqual(bare.sort());
      expect(bare).toContain('client close 1000 some reason readyState=3');
    });
  }
});
