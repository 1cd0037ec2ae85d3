import { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { heartbeat } from '../src/heartbeat.js';
import { PINGS_PER_TURN, PingTurns } from '../src/ping-turns.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('PingTurns', () => {
  it('sends up to PINGS_PER_TURN at once and the rest on later turns, in order', async () => {
    const sent: number[] = [];
    const turns = new PingTurns<number>((n) => sent.push(n));
    const total = PINGS_PER_TURN * 2 + 5;
    for (let i = 0; i < total; i++) turns.ping(i);
    expect(sent).toHaveLength(PINGS_PER_TURN);
    expect(turns.queued).toBe(total - PINGS_PER_TURN);
    await nextTurn();
    expect(sent).toHaveLength(PINGS_PER_TURN * 2);
    await nextTurn();
    expect(sent).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(turns.queued).toBe(0);
  });

  it('starts a fresh budget on the next turn', async () => {
    const sent: number[] = [];
    const turns = new PingTurns<number>((n) => sent.push(n));
    for (let i = 0; i < PINGS_PER_TURN; i++) turns.ping(i);
    await nextTurn();
    expect(turns.ping(-1)).toBe(true);
  });

  it('forgets queued pings on clear()', async () => {
    const sent: number[] = [];
    const turns = new PingTurns<number>((n) => sent.push(n));
    for (let i = 0; i < PINGS_PER_TURN + 3; i++) turns.ping(i);
    turns.clear();
    await nextTurn();
    expect(sent).toHaveLength(PINGS_PER_TURN);
  });
});

describe('heartbeat with more pings due than one turn takes', () => {
  it('runs the pong deadline of a deferred ping from the moment it went out', async () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const server = new FakeServer();
    const beat = heartbeat(server as never, { pingIntervalMs: 100, pongTimeoutMs: 30, pingSlackMs: 0, wheel });
    const sockets = Array.from({ length: PINGS_PER_TURN + 10 }, () => new FakeSocket());
    for (const socket of sockets) server.connect(socket);
    clock.advanceTo(100);
    expect(sockets.filter((s) => s.pings === 1)).toHaveLength(PINGS_PER_TURN);
    const late = sockets.at(-1)!;
    expect(beat.state(late.ws)!.awaitingPong).toBe(true);
    clock.advanceTo(105);
    await nextTurn();
    expect(late.pings).toBe(1);
    expect(beat.state(late.ws)!.lastPingAt).toBe(105);
    clock.advanceTo(130);
    expect(sockets[0]!.terminated).toBe(true);
    expect(late.terminated).toBe(false);
    clock.advanceTo(135);
    expect(late.terminated).toBe(true);
    expect(beat.stats().pingsSent).toBe(sockets.length);
    wheel.close();
  });

  it('skips a deferred ping when the peer spoke while it waited', async () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const server = new FakeServer();
    const beat = heartbeat(server as never, { pingIntervalMs: 100, pongTimeoutMs: 30, pingSlackMs: 0, wheel });
    const sockets = Array.from({ length: PINGS_PER_TURN + 1 }, () => new FakeSocket());
    for (const socket of sockets) server.connect(socket);
    clock.advanceTo(100);
    const late = sockets.at(-1)!;
    clock.advanceTo(102);
    late.emit('message', Buffer.from('hi'), false);
    await nextTurn();
    expect(late.pings).toBe(0);
    expect(beat.state(late.ws)!.awaitingPong).toBe(false);
    clock.advanceTo(150);
    expect(late.terminated).toBe(false);
    wheel.close();
  });
});
