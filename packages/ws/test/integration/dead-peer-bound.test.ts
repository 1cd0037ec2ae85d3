/**
 * The dead-peer bound of heartbeat() on real ws clients (issue 39): clients that stop answering
 * at seeded random points of the period (their transport paused: they read nothing more, so
 * they neither answer pings nor send) are declared dead within pingIntervalMs + pongTimeoutMs of the last
 * frame the server read from them, plus pingSlackMs, a tick, and a margin for a loaded machine.
 * The unit test of the same bound on a ManualClock is test/dead-peer-bound.test.ts.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import { seeded } from '../helpers/seeded.js';
import { closeAll, connect, next, onCleanup, startServer, waitFor } from '../helpers/servers.js';

afterEach(closeAll);

const PING_INTERVAL_MS = 1_000;
const PONG_TIMEOUT_MS = 500;
/** The default pingSlackMs: pingIntervalMs / 32. */
const PING_SLACK_MS = PING_INTERVAL_MS / 32;
/** What a shared 2-core machine under load may add (event-loop stalls, late timers). */
const LOAD_MARGIN_MS = 300;
const CLIENTS = 12;

interface Peer {
  talks: boolean;
  client: WebSocket;
  freezeAt: number;
  lastFrameAt: number;
  deadAt: number | undefined;
}

describe('heartbeat', () => {
  describe('a peer that stops answering at a random point of the period', () => {
    it(
      'is declared dead within pingIntervalMs + pongTimeoutMs of its last frame (+ slack, tick and load)',
      { timeout: 30_000 },
      async () => {
        const random = seeded(3_9);
        const { wss, url } = await startServer();
        const beat = heartbeat(wss, { pingIntervalMs: PING_INTERVAL_MS, pongTimeoutMs: PONG_TIMEOUT_MS });
        onCleanup(() => beat.stop());
        const peers = new Map<WebSocket, Peer>();
        beat.on('dead', ({ socket }) => (peers.get(socket)!.deadAt = performance.now()));
        const startedAt = performance.now();
        for (let i = 0; i < CLIENTS; i++) {
          const accepted = next<WebSocket>(wss, 'connection');
          const client = await connect(url);
          const server = await accepted;
          const peer: Peer = {
            talks: i % 2 === 1,
            client,
            // Anywhere in the second and third periods, after a ping round or two.
            freezeAt: startedAt + PING_INTERVAL_MS + random() * 2 * PING_INTERVAL_MS,
            lastFrameAt: performance.now(),
            deadAt: undefined,
          };
          peers.set(server, peer);
          // What the server read last: a pong, or a message (the heartbeat listens to neither).
          const heard = (): void => void (peer.lastFrameAt = performance.now());
          server.on('pong', heard);
          server.on('message', heard);
          const gapMs = 50 + random() * 200;
          const talk = peer.talks ? setInterval(() => client.send('news'), gapMs) : undefined;
          // Its transport stops reading (ws 8.0 has no `pause()` of its own).
          const transport = (client as unknown as { _socket: { pause(): void } })._socket;
          const freeze = setTimeout(() => {
            clearInterval(talk);
            transport.pause();
          }, peer.freezeAt - performance.now());
          onCleanup(() => {
            clearInterval(talk);
            clearTimeout(freeze);
          });
        }
        const all = [...peers.values()];
        await waitFor(() => all.every((p) => p.deadAt !== undefined), 20_000, 'every frozen peer declared dead');
        const bound = PING_INTERVAL_MS + PONG_TIMEOUT_MS + PING_SLACK_MS + 1 + LOAD_MARGIN_MS;
        for (const p of all) {
          const what = `a ${p.talks ? 'talking' : 'quiet'} peer frozen ${Math.round(p.freezeAt - startedAt)} ms in`;
          // Never declared dead while it still answered.
          expect(p.deadAt!, what).toBeGreaterThan(p.freezeAt);
          expect(p.deadAt! - p.lastFrameAt, what).toBeLessThanOrEqual(bound);
        }
        expect(beat.stats().dead).toBe(CLIENTS);
      },
    );
  });
});
