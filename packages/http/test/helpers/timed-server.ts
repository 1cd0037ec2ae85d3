/**
 * A node:http server with serverTimeouts on a ManualClock wheel: the tests move time by hand, so
 * every limit fires exactly when the test says, whatever the machine's load.
 */
import http from 'node:http';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { serverTimeouts } from '../../src/index.js';
import type { ServerTimeouts, ServerTimeoutsOptions, TimeoutEvent } from '../../src/index.js';
import { arrivals, type loopback } from './loopback.js';

export interface TimedServer {
  server: http.Server;
  timeouts: ServerTimeouts;
  clock: ManualClock;
  wheel: TimingWheel;
  port: number;
  events: TimeoutEvent[];
  /** Resolves once the server has seen `n` requests (default 1). */
  arrived: (n?: number) => Promise<void>;
}

export async function timedServer(
  net: ReturnType<typeof loopback>,
  handler: http.RequestListener,
  options: Omit<ServerTimeoutsOptions, 'wheel'> = {},
  server: http.Server = http.createServer(handler),
): Promise<TimedServer> {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  const timeouts = serverTimeouts(server, { ...options, wheel });
  const arrived = arrivals(server);
  const events: TimeoutEvent[] = [];
  timeouts.on('timeout', (event) => events.push(event));
  const port = await net.listen(server);
  return { server, timeouts, clock, wheel, port, events, arrived };
}
