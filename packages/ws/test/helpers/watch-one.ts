import type { TimingWheel } from '@tickwheel/core';
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
