/**
 * The connection limits and the keepalive under random traffic from both ends.
 *
 * Adapted from uWebSockets.js, tests/Hammer.js ("the so called hammer test"): connections opened
 * one after another, each end doing a random action (close, send, or on our side also terminate)
 * on open and on every message, against a server with an `idleTimeout`. uWebSockets has no test
 * of `idleTimeout` or `maxLifetime` themselves (its tests/ cover parsers, routing and the topic
 * tree); this is the one that runs its timeouts under churn. What it checks there (no crash, no
 * use of a closed socket) is here: no listener of ours throws, no live peer is declared dead,
 * every connection ends by the lifetime at the latest, and no timer outlives its socket.
 *
 * Differences: uWebSockets closes a socket at the end of its `maxLifetime` (whole minutes) with
 * 1000 "please reconnect"; `maxLifetimeMs` closes with 1001 (going away), at a jittered point.
 * The actions come from a seeded generator, so a failure replays.
 */
import { TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import type { LimitEvent } from '../../src/types.js';
import { closeAll, onCleanup, startServer, waitFor } from '../helpers/servers.js';
import { seeded } from '../helpers/seeded.js';

afterEach(closeAll);

/** Connections opened, one after another (Hammer.js opens 1 000; bounded here for CI). */
const CONNECTIONS = 150;
const MAX_LIFETIME_MS = 800;

describe('heartbeat under random traffic (uWebSockets.js tests/Hammer.js)', () => {
  // The waits below allow 27 s on a loaded machine: the test's own limit leaves them room.
  it(
    'ends every connection by its lifetime, with no dead live peer and no timer left',
    { timeout: 40_000 },
    async () => {
      const random = seeded(27);
      const { wss, url } = await startServer();
      const wheel = new TimingWheel();
      onCleanup(() => wheel.close());
      const beat = heartbeat(wss, {
        wheel,
        // A short interval, so that pings run under the churn too, and the longest answer time it allows.
        pingIntervalMs: 150,
        pongTimeoutMs: 150,
        keepaliveMs: 50,
        firstMessageMs: 400,
        maxLifetimeMs: MAX_LIFETIME_MS,
        lifetimeJitter: 0.5,
      });
      onCleanup(() => beat.stop());
      const limits: LimitEvent[] = [];
      const dead: unknown[] = [];
      beat.on('limit', (e) => limits.push(e));
      beat.on('dead', (e) => dead.push(e));

      // Hammer.js's performRandomServerAction: close, send, or (ours) terminate.
      const serverAction = (ws: WebSocket): void => {
        const roll = random();
        if (roll < 0.08) ws.close();
        else if (roll < 0.1) ws.terminate();
        else if (roll < 0.6 && ws.readyState === ws.OPEN) ws.send('a test message');
      };
      const serverErrors: Error[] = [];
      wss.on('connection', (ws) => {
        ws.on('error', (error) => serverErrors.push(error));
        ws.on('message', () => serverAction(ws));
        serverAction(ws);
      });

      // Hammer.js's performRandomClientAction: close or send (it never terminates from the client).
      const clientAction = (ws: WebSocket): void => {
        const roll = random();
        if (roll < 0.05) ws.close();
        else if (roll < 0.6 && ws.readyState === ws.OPEN) ws.send('a test message');
      };
      const clients: WebSocket[] = [];
      let closed = 0;
      const openOne = (): Promise<void> =>
        new Promise((resolve) => {
          const ws = new WebSocket(url);
          clients.push(ws);
          ws.on('error', () => undefined);
          ws.on('message', () => clientAction(ws));
          ws.once('close', () => {
            closed++;
            resolve();
          });
          ws.once('open', () => {
            clientAction(ws);
            resolve();
          });
        });
      onCleanup(() => {
        for (const ws of clients) ws.terminate();
      });
      for (let i = 0; i < CONNECTIONS; i++) await openOne();

      // Every connection is gone by its lifetime at the latest (loaded machine: generous bound).
      await waitFor(() => closed === CONNECTIONS, 20_000, 'every client closed');
      await waitFor(() => wss.clients.size === 0, 5_000, 'every server socket closed');
      expect(beat.size).toBe(0);
      // No timer outlives its socket: the heartbeat's wheel is empty.
      await waitFor(() => wheel.size === 0, 2_000, 'the wheel to empty');
      expect(dead).toEqual([]);
      expect(serverErrors).toEqual([]);
      expect(limits.every((e) => e.kind === 'lifetime' || e.kind === 'firstMessage')).toBe(true);
      // The run is long enough for both limits to have fired on some connections.
      expect(limits.some((e) => e.kind === 'lifetime')).toBe(true);
      const stats = beat.stats();
      expect(stats.limits).toBe(limits.length);
      expect(stats.keepalivesSent).toBeGreaterThan(0);
    },
  );
});
