import { performance } from 'node:perf_hooks';
import { inspect } from 'node:util';
import { TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { heartbeat, type HeartbeatController } from '../../src/heartbeat.js';
import type { DeadPeerEvent } from '../../src/types.js';
import { closeAll, connect, next, onCleanup, sleep, startNoServer, startServer, waitFor } from '../helpers/servers.js';

/** Slack for a shared, noisy 2-core machine on top of "pongTimeoutMs + one tick". */
const SLACK_MS = 150;

function track<S extends WebSocket>(beat: HeartbeatController<S>): HeartbeatController<S> {
  onCleanup(() => beat.stop());
  return beat;
}

afterEach(closeAll);

describe('heartbeat (real ws on 127.0.0.1)', () => {
  it('terminates a peer that stops answering pings within pongTimeoutMs plus one tick', async () => {
    const { wss, url } = await startServer();
    const beat = track(heartbeat(wss, { pingIntervalMs: 60, pongTimeoutMs: 40 }));
    const client = await connect(url, { autoPong: false });
    let pingAt = NaN;
    client.once('ping', () => (pingAt = performance.now()));
    const closed = next<number>(client, 'close');
    const dead = await next<DeadPeerEvent>(beat, 'dead');
    expect(dead.reason).toBe('dead');
    expect(dead.waitedMs).toBeGreaterThanOrEqual(40);
    expect(dead.waitedMs).toBeLessThanOrEqual(40 + 1 + SLACK_MS);
    expect(dead.state.awaitingPong).toBe(true);
    await closed;
    expect(performance.now() - pingAt).toBeLessThanOrEqual(40 + 1 + SLACK_MS);
    expect(beat.stats()).toMatchObject({ connections: 0, dead: 1 });
  });

  it('sends the close code and reason to a peer that only stopped answering', async () => {
    const { wss, url } = await startServer();
    track(heartbeat(wss, { pingIntervalMs: 50, pongTimeoutMs: 30, closeCode: 4000, closeReason: 'no pong' }));
    const client = await connect(url, { autoPong: false });
    const [code, reason] = await new Promise<[number, Buffer]>((resolve) =>
      client.once('close', (c: number, r: Buffer) => resolve([c, r])),
    );
    expect(code).toBe(4000);
    expect(reason.toString()).toBe('no pong');
  });

  it('terminates a peer whose socket stopped reading', async () => {
    const { wss, url } = await startServer();
    const beat = track(heartbeat(wss, { pingIntervalMs: 50, pongTimeoutMs: 40 }));
    const client = await connect(url);
    client.pause();
    const dead = await next<DeadPeerEvent>(beat, 'dead');
    expect(dead.waitedMs).toBeGreaterThanOrEqual(40);
    expect(dead.waitedMs).toBeLessThanOrEqual(40 + 1 + SLACK_MS);
  });

  it('never pings nor kills a busy peer', async () => {
    const { wss, url } = await startServer();
    // A peer is looked at every half interval while it talks, and pinged after a look that found
    // nothing new: 200 ms leaves room for a loaded machine's stalls between sends every 10 ms.
    const beat = track(heartbeat(wss, { pingIntervalMs: 400, pongTimeoutMs: 200 }));
    const client = await connect(url, { autoPong: false });
    let pings = 0;
    client.on('ping', () => pings++);
    const timer = setInterval(() => client.send('busy'), 10);
    onCleanup(() => clearInterval(timer));
    await sleep(2_000);
    expect(pings).toBe(0);
    expect(client.readyState).toBe(WebSocket.OPEN);
    expect(beat.stats()).toMatchObject({ connections: 1, pingsSent: 0, dead: 0 });
  });

  it('keeps an idle peer that answers pings alive through several rounds', async () => {
    const { wss, url } = await startServer();
    const beat = track(heartbeat(wss, { pingIntervalMs: 40, pongTimeoutMs: 30 }));
    const client = await connect(url);
    let pings = 0;
    client.on('ping', () => pings++);
    await waitFor(() => pings >= 5, 3_000, 'five heartbeat rounds');
    expect(client.readyState).toBe(WebSocket.OPEN);
    const [server] = wss.clients;
    const state = beat.state(server)!;
    expect(state.pingsSent).toBeGreaterThanOrEqual(5);
    expect(state.rttMs).toBeGreaterThanOrEqual(0);
    expect(beat.stats().dead).toBe(0);
  });

  it('works with a noServer WebSocketServer behind a node:http server', async () => {
    const { wss, url } = await startNoServer();
    const beat = track(heartbeat(wss, { pingIntervalMs: 50, pongTimeoutMs: 30 }));
    const alive = await connect(url);
    const silent = await connect(url, { autoPong: false });
    const dead = await next<DeadPeerEvent>(beat, 'dead');
    expect(dead.waitedMs).toBeLessThanOrEqual(30 + 1 + SLACK_MS);
    await waitFor(() => silent.readyState === WebSocket.CLOSED, 2_000, 'the silent client to be closed');
    expect(alive.readyState).toBe(WebSocket.OPEN);
    expect(beat.size).toBe(1);
  });

  it('lets a client detect a server that stopped answering', async () => {
    const { url } = await startServer({ autoPong: false });
    const client = new WebSocket(url);
    onCleanup(() => client.terminate());
    const beat = track(heartbeat(client, { pingIntervalMs: 50, pongTimeoutMs: 30 }));
    const dead = await next<DeadPeerEvent>(beat, 'dead');
    expect(dead.socket).toBe(client);
    expect(dead.waitedMs).toBeLessThanOrEqual(30 + 1 + SLACK_MS);
    await waitFor(() => client.readyState === WebSocket.CLOSED, 2_000, 'the client to close');
  });

  describe('where the record lives', () => {
    /** What user code can reflect on a socket: every key, and the key list util.inspect prints. */
    const reflected = (socket: WebSocket) => ({
      ownKeys: Reflect.ownKeys(socket).map(String),
      inspected: [...inspect(socket, { showHidden: true, depth: 0 }).matchAll(/^ {2}(\S+?):/gm)].map((m) => m[1]),
    });

    it('leaves a client and a server socket looking as without a heartbeat, even to removeAllListeners()', async () => {
      const { wss, url } = await startServer();
      const accepted: WebSocket[] = [];
      wss.on('connection', (ws) => accepted.push(ws));
      const bareClient = await connect(url);
      await waitFor(() => accepted.length === 1, 2_000, 'the bare connection');
      const beat = track(heartbeat(wss, { pingIntervalMs: 50, pongTimeoutMs: 30, pingSlackMs: 0 }));
      const client = await connect(url);
      await waitFor(() => accepted.length === 2, 2_000, 'the watched connection');
      beat.remove(accepted[0]);
      const own = track(heartbeat(client, { pingIntervalMs: 50, pongTimeoutMs: 30, pingSlackMs: 0 }));
      expect(beat.state(accepted[1])).toBeDefined();
      expect(own.state(client)).toBeDefined();
      expect(reflected(accepted[1])).toEqual(reflected(accepted[0]));
      expect(reflected(client)).toEqual(reflected(bareClient));
      expect(JSON.stringify(Object.keys(client))).toBe(JSON.stringify(Object.keys(bareClient)));
      // The user takes every listener, ours included: the records stay, and pongs still count (byte counters).
      client.removeAllListeners();
      accepted[1].removeAllListeners();
      await sleep(300);
      expect(client.readyState).toBe(WebSocket.OPEN);
      expect(own.state(client)!.pingsSent).toBeGreaterThanOrEqual(2);
      expect(beat.state(accepted[1])!.pingsSent).toBeGreaterThanOrEqual(2);
      expect(own.stats().dead + beat.stats().dead).toBe(0);
    });

    it('lets a server heartbeat and one on a single socket of that server both watch it', async () => {
      const { wss, url } = await startServer();
      const beat = track(heartbeat(wss, { pingIntervalMs: 60, pongTimeoutMs: 40 }));
      const accepted = next<WebSocket>(wss, 'connection');
      const client = await connect(url);
      const server = await accepted;
      const own = track(heartbeat(server, { pingIntervalMs: 40, pongTimeoutMs: 30 }));
      await sleep(300);
      expect(beat.state(server)!.pingsSent + own.state(server)!.pingsSent).toBeGreaterThanOrEqual(3);
      expect(own.stats().dead + beat.stats().dead).toBe(0);
      const closed = next<number>(server, 'close');
      client.pause(); // stops answering: the one with the shorter timeout terminates it
      await closed;
      await waitFor(() => beat.size + own.size === 0, 2_000, 'both to forget the socket');
      expect(own.stats().dead + beat.stats().dead).toBe(1);
    });
  });

  it('detects a dead server from an otherwise quiet client process after its loop was blocked', async () => {
    const { url } = await startServer({ autoPong: false });
    const client = await connect(url);
    const beat = track(heartbeat(client, { pingIntervalMs: 40, pongTimeoutMs: 30 }));
    let pingedAt = NaN;
    const ping = client.ping.bind(client);
    client.ping = (...args: Parameters<WebSocket['ping']>) => {
      pingedAt = performance.now();
      ping(...args);
      // Block the loop past the pong deadline: the wheel then wakes late and yields one turn to
      // I/O first. Nothing else happens in this process: no I/O, no other timer may wake it.
      const until = performance.now() + 60;
      while (performance.now() < until);
    };
    const dead = next<DeadPeerEvent>(beat, 'dead');
    // Wakes the loop once after 1.5 s, so a stalled wheel shows up as a late detection, not a hang.
    const watchdog = setTimeout(() => undefined, 1_500);
    onCleanup(() => clearTimeout(watchdog));
    await dead;
    expect(performance.now() - pingedAt).toBeLessThan(60 + 30 + SLACK_MS + 200);
  });

  it('reports writer idleness from the bytes written (the transport counter)', async () => {
    const { wss, url } = await startServer();
    // The idle limit is far above the 20 ms send period, so a loaded machine's scheduling gaps
    // cannot pass for idleness while the sends go on.
    const beat = track(heartbeat(wss, { pingIntervalMs: 0, writerIdleMs: 400 }));
    const client = await connect(url);
    let received = 0;
    client.on('message', () => received++);
    const [server] = wss.clients;
    const idle = next(beat, 'idle');
    const started = performance.now();
    const timer = setInterval(() => server.send('tick'), 20);
    await sleep(300);
    clearInterval(timer);
    const stoppedAt = performance.now();
    const event = (await idle) as { kind: string; idleMs: number };
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(300);
    expect(event.kind).toBe('writer');
    expect(event.idleMs).toBeGreaterThanOrEqual(400);
    expect(received).toBeGreaterThan(5);
  });

  it('closes an idle connection with closeOnIdle', async () => {
    const { wss, url } = await startServer();
    track(
      heartbeat(wss, {
        pingIntervalMs: 0,
        readerIdleMs: 60,
        closeOnIdle: true,
        idleCloseCode: 4001,
        idleCloseReason: 'idle',
      }),
    );
    const client = await connect(url);
    const [code, reason] = await new Promise<[number, Buffer]>((resolve) =>
      client.once('close', (c: number, r: Buffer) => resolve([c, r])),
    );
    expect([code, reason.toString()]).toEqual([4001, 'idle']);
  });

  describe('close', () => {
    /** A heartbeat on a real server, one client, and the server's side of its connection. */
    async function watchedPair(): Promise<{ beat: HeartbeatController; client: WebSocket; server: WebSocket }> {
      const { wss, url } = await startServer();
      const beat = track(heartbeat(wss, { pingIntervalMs: 5_000 }));
      const accepted = next<WebSocket>(wss, 'connection');
      const client = await connect(url);
      return { beat, client, server: await accepted };
    }

    it("forgets a socket before ws emits its 'close', without a listener among the socket's 'close' listeners", async () => {
      const { beat, client, server } = await watchedPair();
      expect(beat.size).toBe(1);
      // ws's own (the server tracks its clients) and nothing else, as without a heartbeat.
      expect(server.listenerCount('close')).toBe(1);
      const seen = new Promise<[number, boolean]>((resolve) =>
        server.once('close', () => resolve([beat.size, beat.state(server) === undefined])),
      );
      client.close(1000, 'bye');
      expect(await seen).toEqual([0, true]);
    });

    it('drops the record the moment the socket closes after the user removed every socket listener', async () => {
      const { beat, client, server } = await watchedPair();
      server.removeAllListeners();
      client.terminate();
      await waitFor(() => server.readyState === WebSocket.CLOSED, 5_000, 'the server side to close');
      expect(beat.size).toBe(0);
    });

    it('drops the record of a peer whose bad frame makes ws close the socket', async () => {
      const { beat, client, server } = await watchedPair();
      const failed = next<Error>(server, 'error');
      // A masked frame with the reserved opcode 3: the server's frame reader fails on it.
      (client as unknown as { _socket: { write(b: Buffer): void } })._socket.write(
        Buffer.from([0x83, 0x80, 0, 0, 0, 0]),
      );
      expect((await failed).message).toMatch(/opcode/i);
      await new Promise((resolve) => setImmediate(resolve));
      expect(beat.size).toBe(0);
      expect(server.readyState).not.toBe(WebSocket.OPEN);
    });
  });

  describe('#stop', () => {
    it('detaches everything and leaves the connections open', async () => {
      const { wss, url } = await startServer();
      const beat = track(heartbeat(wss, { pingIntervalMs: 40, pongTimeoutMs: 20, writerIdleMs: 1_000 }));
      const client = await connect(url, { autoPong: false });
      const [server] = wss.clients;
      beat.stop();
      expect(Object.prototype.hasOwnProperty.call(server, 'send')).toBe(false);
      await sleep(200);
      expect(client.readyState).toBe(WebSocket.OPEN);
      const echoed = next<Buffer>(client, 'message');
      server.send('still open');
      expect((await echoed).toString()).toBe('still open');
    });
  });

  it('does not kill healthy peers whose pongs arrived while its own event loop was blocked', async () => {
    const wheel = new TimingWheel();
    onCleanup(() => wheel.close());
    const { wss, url } = await startServer({ backlog: 2048 });
    const clients: WebSocket[] = [];
    for (let batch = 0; batch < 15; batch++) {
      clients.push(...(await Promise.all(Array.from({ length: 100 }, () => connect(url)))));
    }
    await waitFor(() => wss.clients.size === 1_500, 10_000, '1,500 server connections');
    // Adopting them all at once pings them all in one wheel pass; the timer filed right after
    // runs in that same pass and blocks the loop for 300 ms, past every pong deadline. The
    // answers are read before the late deadlines are checked (the core driver yields to I/O
    // when it wakes late), so nobody is declared dead for our own stall.
    const beat = track(heartbeat(wss, { pingIntervalMs: 100, pongTimeoutMs: 50, wheel }));
    wheel.schedule(100, () => {
      const until = performance.now() + 300;
      while (performance.now() < until);
    });
    await waitFor(() => beat.stats().pingsSent >= 3_000, 10_000, 'two rounds of pings');
    expect(beat.stats()).toMatchObject({ connections: 1_500, dead: 0 });
    expect(clients.every((c) => c.readyState === WebSocket.OPEN)).toBe(true);
  }, 30_000);

  it('opens and closes 1,000 concurrent connections cleanly, leaving the wheel empty', async () => {
    const wheel = new TimingWheel();
    onCleanup(() => wheel.close());
    const { wss, url } = await startServer({ backlog: 1024 });
    const beat = track(heartbeat(wss, { pingIntervalMs: 150, pongTimeoutMs: 100, readerIdleMs: 10_000, wheel }));
    const clients: WebSocket[] = [];
    for (let batch = 0; batch < 10; batch++) {
      clients.push(...(await Promise.all(Array.from({ length: 100 }, () => connect(url)))));
    }
    await waitFor(() => beat.size === 1_000, 10_000, '1,000 watched connections');
    // One handle per due time, shared by the connections due then: far fewer than connections.
    expect(wheel.size).toBeGreaterThan(0);
    expect(wheel.size).toBeLessThan(1_000);
    await sleep(400);
    expect(beat.stats()).toMatchObject({ connections: 1_000, dead: 0 });
    expect(beat.stats().pingsSent).toBeGreaterThanOrEqual(1_000);
    await Promise.all(
      clients.map((c) => {
        const closed = next(c, 'close');
        c.close(1000, 'done');
        return closed;
      }),
    );
    await waitFor(() => wss.clients.size === 0, 10_000, 'the server to see every close');
    expect(beat.size).toBe(0);
    expect(wheel.size).toBe(0);
    expect(beat.stats()).toMatchObject({ connections: 0, dead: 0 });
  }, 30_000);
});

describe('a ping queued behind our own data (real ws on 127.0.0.1)', () => {
  it(
    'does not declare a server dead while a large upload drains slowly past the pong timeout',
    // 6.4 s of 5 ms reads when idle; a loaded 2-core machine stretches the reads to 35 s.
    { timeout: 90_000 },
    async () => {
      const { wss, url } = await startServer({ maxPayload: 96 * 1024 * 1024 });
      const accepted = next<WebSocket>(wss, 'connection');
      const client = await connect(url);
      const server = await accepted;
      // The server reads one chunk (at most libuv's 64 KiB) every 5 ms, so the upload takes far
      // longer than pongTimeoutMs on any machine: 80 MiB is at least 1,280 reads, 6.4 s. The pong
      // timeout still covers what the kernel buffers hold after the ping was written.
      const transport = (
        server as unknown as { _socket: { pause(): void; resume(): void; on(e: 'data', f: () => void): void } }
      )._socket;
      transport.pause();
      transport.on('data', () => transport.pause());
      const throttle = setInterval(() => transport.resume(), 5);
      onCleanup(() => clearInterval(throttle));
      const beat = track(heartbeat(client, { pingIntervalMs: 2_500, pongTimeoutMs: 2_500, pingSlackMs: 0 }));
      const dead: DeadPeerEvent[] = [];
      beat.on('dead', (e) => dead.push(e));
      const received = next<Buffer>(server, 'message');
      const startedAt = performance.now();
      client.send(Buffer.alloc(80 * 1024 * 1024, 7));
      const message = await received;
      clearInterval(throttle);
      // The upload outlasted the pong timeout: a deadline from the ping() call would have killed it.
      // Long enough for a ping to be sent and its pong timeout to pass behind the upload.
      expect(performance.now() - startedAt).toBeGreaterThan(2_500 + 2_500);
      expect(message.length).toBe(80 * 1024 * 1024);
      expect(dead).toEqual([]);
      expect(client.readyState).toBe(WebSocket.OPEN);
      expect(beat.stats().pingsSent).toBeGreaterThan(0);
    },
  );

  it('still terminates a peer that stopped reading while our data is queued', async () => {
    const { wss, url } = await startServer({ maxPayload: 64 * 1024 * 1024 });
    const accepted = next<WebSocket>(wss, 'connection');
    const client = await connect(url);
    const server = await accepted;
    (server as unknown as { _socket: { pause(): void } })._socket.pause();
    const beat = track(heartbeat(client, { pingIntervalMs: 20, pongTimeoutMs: 10, pingSlackMs: 0 }));
    client.send(Buffer.alloc(24 * 1024 * 1024, 7));
    const dead = await next<DeadPeerEvent>(beat, 'dead');
    expect(dead.socket).toBe(client);
  });
});
