/**
 * The dead-peer bound of heartbeat() (issue 39): a peer that freezes is declared dead within
 * pingIntervalMs + pongTimeoutMs of its last frame, plus pingSlackMs and one wheel tick, as
 * engine.io promises with `pingInterval + pingTimeout` (engine.io lib/socket.ts: `schedulePing`
 * and `resetPingTimeout`). Peers freeze at seeded random points of the period, on a ManualClock.
 */
import type { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { heartbeat } from '../src/heartbeat.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';
import { seeded } from './helpers/seeded.js';
import { useManualWheel } from './helpers/watch-one.js';

let clock: ManualClock;
let wheel: TimingWheel;
useManualWheel((c, w) => ([clock, wheel] = [c, w]));

const PING_INTERVAL_MS = 2_000;
const PONG_TIMEOUT_MS = 500;
/** The default: pingIntervalMs / 32. */
const SLACK_MS = PING_INTERVAL_MS / 32;
/** The bound, with the wheel's tick (1 ms). */
const BOUND_MS = PING_INTERVAL_MS + PONG_TIMEOUT_MS + SLACK_MS + 1;

/** How a simulated peer behaves until it freezes. */
type Kind = 'quiet' | 'chatty' | 'sparse';

interface Peer {
  kind: Kind;
  socket: FakeSocket;
  /** Its pong comes this long after our ping. */
  rttMs: number;
  /** Mean gap between its own messages (Infinity: it only answers pings). */
  talkGapMs: number;
  nextTalkAt: number;
  freezeAt: number;
  lastFrameAt: number;
  pongsDue: number[];
  pingsSeen: number;
  pingsBeforeFreeze: number;
  deadAt: number | undefined;
}

/**
 * `count` peers on one heartbeat, each frozen at a random time in [freezeFrom, freezeTo), run on
 * the manual clock one ms at a time until `endAt`. A peer answers each ping after its round trip
 * and, unless quiet, sends messages nobody listens to (the transport's counter shows them).
 */
function simulate(seed: number, count: number, freezeFrom: number, freezeTo: number, endAt: number): Peer[] {
  const random = seeded(seed);
  const server = new FakeServer();
  const beat = heartbeat(server as never, { pingIntervalMs: PING_INTERVAL_MS, pongTimeoutMs: PONG_TIMEOUT_MS, wheel });
  const peers: Peer[] = [];
  const bySocket = new Map<unknown, Peer>();
  beat.on('dead', ({ socket }) => (bySocket.get(socket)!.deadAt = clock.now()));
  for (let i = 0; i < count; i++) {
    const kind: Kind = (['quiet', 'chatty', 'sparse'] as const)[i % 3];
    const socket = new FakeSocket({ transport: true });
    const talkGapMs = kind === 'quiet' ? Infinity : kind === 'chatty' ? 20 + random() * 280 : 500 + random() * 2_500;
    const peer: Peer = {
      kind,
      socket,
      rttMs: 1 + Math.floor(random() * 40),
      talkGapMs,
      nextTalkAt: kind === 'quiet' ? Infinity : random() * Math.min(talkGapMs, 3_000),
      freezeAt: freezeFrom + random() * (freezeTo - freezeFrom),
      lastFrameAt: 0,
      pongsDue: [],
      pingsSeen: 0,
      pingsBeforeFreeze: 0,
      deadAt: undefined,
    };
    peers.push(peer);
    bySocket.set(socket.ws, peer);
    server.connect(socket);
  }
  for (let t = 1; t <= endAt; t++) {
    clock.advanceTo(t);
    for (const p of peers) {
      if (p.socket.readyState !== 1) continue;
      for (; p.pingsSeen < p.socket.pings; p.pingsSeen++) {
        p.pongsDue.push(t + p.rttMs);
        if (t < p.freezeAt) p.pingsBeforeFreeze++;
      }
      if (t >= p.freezeAt) continue;
      while (p.pongsDue.length > 0 && p.pongsDue[0] <= t) {
        p.pongsDue.shift();
        p.socket.emit('pong', Buffer.alloc(0));
        p.lastFrameAt = t;
      }
      if (t >= p.nextTalkAt) {
        p.socket.receiveBytes(20);
        p.lastFrameAt = t;
        p.nextTalkAt = t + p.talkGapMs * (0.5 + random());
      }
    }
  }
  beat.stop();
  return peers;
}

describe('heartbeat', () => {
  describe('a dead peer', () => {
    it('is declared dead within pingIntervalMs + pongTimeoutMs (+ slack and a tick) of its last frame, wherever in the period it froze', () => {
      const peers = simulate(39, 48, 3_000, 15_000, 15_000 + 2 * BOUND_MS);
      for (const p of peers) {
        expect(p.deadAt, `a ${p.kind} peer frozen at ${p.freezeAt}`).toBeDefined();
        // Never declared dead while it still answered.
        expect(p.deadAt!).toBeGreaterThan(p.freezeAt);
        expect(p.deadAt! - p.lastFrameAt, `a ${p.kind} peer, last frame at ${p.lastFrameAt}`).toBeLessThanOrEqual(
          BOUND_MS,
        );
      }
      // The points spread over the whole period: some peers needed nearly all of the bound.
      const worst = Math.max(...peers.map((p) => p.deadAt! - p.lastFrameAt));
      expect(worst).toBeGreaterThan(PING_INTERVAL_MS + PONG_TIMEOUT_MS - 100);
    });

    it('never pings a peer that talks at least every half interval until it freezes', () => {
      const peers = simulate(40, 30, 8_000, 12_000, 12_000 + 2 * BOUND_MS);
      const chatty = peers.filter((p) => p.kind === 'chatty');
      expect(chatty.length).toBe(10);
      for (const p of chatty) expect(p.pingsBeforeFreeze).toBe(0);
      for (const p of peers.filter((p) => p.kind === 'quiet')) expect(p.pingsBeforeFreeze).toBeGreaterThanOrEqual(3);
    });
  });
});
