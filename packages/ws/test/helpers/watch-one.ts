import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, beforeEach } from 'vitest';
import { heartbeat } from '../../src/heartbeat.js';
import type { DeadPeerEvent, HeartbeatOptions, IdleEvent } from '../../src/types.js';
import { FakeServer, FakeSocket } from './fake-socket.js';

/** A heartbeat on a fake server with one connection, on the manual clock. */
export function watchOne(wheel: TimingWheel, options: HeartbeatOptions = {}) {
  const server = new FakeServer();
  const beat = heartbeat(server as never, {
    pingIntervalMs: 100,
    pongTimeoutMs: 30,
    pingSlackMs: 0,
    wheel,
    ...options,
  });
  const socket = new FakeSocket();
  server.connect(socket);
  const dead: DeadPeerEvent[] = [];
  const idle: IdleEvent[] = [];
  beat.on('dead', (e) => dead.push(e));
  beat.on('idle', (e) => idle.push(e));
  return { server, beat, socket, dead, idle };
}

/** A fresh manual clock and wheel for each test (handed to `use`), the wheel closed after it. */
export function useManualWheel(use: (clock: ManualClock, wheel: TimingWheel) => void): void {
  let wheel: TimingWheel | undefined;
  beforeEach(() => {
    const clock = new ManualClock(0);
    wheel = new TimingWheel({ clock });
    use(clock, wheel);
  });
  afterEach(() => wheel?.close());
}
