import type { IncomingMessage } from 'node:http';
import type { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { heartbeat } from '../src/heartbeat.js';
import type { HeartbeatOptions, PresenceTracker } from '../src/types.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';
import { useManualWheel } from './helpers/watch-one.js';

let clock: ManualClock;
let wheel: TimingWheel;
useManualWheel((c, w) => ([clock, wheel] = [c, w]));

/** A tracker that records its calls, as RedisPresence would receive them. */
function tracker(reply: () => unknown = () => undefined) {
  const calls: [string, string, object][] = [];
  const presence: PresenceTracker = {
    join: (member, connection) => (calls.push(['join', member, connection]), reply()),
    leave: (member, connection) => (calls.push(['leave', member, connection]), reply()),
  };
  return { presence, calls };
}

const memberOf = (request: IncomingMessage) =>
  new URL(request.url ?? '/', 'http://localhost').searchParams.get('user') ?? undefined;

function serve(options: HeartbeatOptions) {
  const server = new FakeServer();
  const beat = heartbeat(server as never, {
    pingIntervalMs: 100,
    pongTimeoutMs: 30,
    pingSlackMs: 0,
    wheel,
    ...options,
  });
  /** A connection accepted with an upgrade request for `url`, as ws's handleUpgrade hands it over. */
  const accept = (url: string) => {
    const socket = new FakeSocket();
    server.clients.add(socket.ws);
    server.emit('connection', socket.ws, { url });
    return socket;
  };
  return { server, beat, accept };
}

describe('heartbeat presence', () => {
  it('joins each accepted connection under memberOf(request), and leaves it when it closes', () => {
    const { presence, calls } = tracker();
    const { accept } = serve({ presence, memberOf });
    const alice = accept('/?user=alice');
    const anonymous = accept('/');
    expect(calls).toEqual([['join', 'alice', alice.ws]]);
    alice.readyState = 3;
    alice.finishClose();
    anonymous.finishClose();
    expect(calls).toEqual([
      ['join', 'alice', alice.ws],
      ['leave', 'alice', alice.ws],
    ]);
  });

  it('leaves a connection the heartbeat declares dead', () => {
    const { presence, calls } = tracker();
    const { beat, accept } = serve({ presence, memberOf });
    const silent = accept('/?user=bob');
    const dead: unknown[] = [];
    beat.on('dead', (event) => dead.push(event));
    clock.advance(130);
    expect(silent.terminated).toBe(true);
    expect(dead).toHaveLength(1);
    expect(calls.map(([op, member]) => `${op} ${member}`)).toEqual(['join bob', 'leave bob']);
  });

  it('leaves the connections it stops watching: remove() and stop()', () => {
    const { presence, calls } = tracker();
    const { beat, accept } = serve({ presence, memberOf });
    const a = accept('/?user=a');
    accept('/?user=b');
    expect(beat.remove(a.ws)).toBe(true);
    beat.stop();
    expect(calls.map(([op, member]) => `${op} ${member}`)).toEqual(['join a', 'join b', 'leave a', 'leave b']);
  });

  it('tracks no connection the server had before, or that comes without a request through add()', () => {
    const { presence, calls } = tracker();
    const server = new FakeServer();
    const before = new FakeSocket();
    server.clients.add(before.ws);
    const beat = heartbeat(server as never, { pingIntervalMs: 100, wheel, presence, memberOf });
    beat.add(new FakeSocket().ws);
    expect(beat.size).toBe(2);
    beat.stop();
    expect(calls).toEqual([]);
  });

  it("keeps a tracker's rejected promise from becoming an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { presence, calls } = tracker(() => Promise.reject(new Error('Redis is down')));
      const { accept } = serve({ presence, memberOf });
      accept('/?user=carol').finishClose();
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(calls).toHaveLength(2);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it.each([
    [
      { presence: tracker().presence },
      TypeError,
      /^@tickwheel\/ws: memberOf must be a function \(presence needs it\), got undefined$/,
    ],
    [
      { memberOf },
      TypeError,
      /presence must be a presence with join\(\) and leave\(\) \(a RedisPresence\), got undefined/,
    ],
    [
      { presence: { join: () => undefined }, memberOf },
      TypeError,
      /presence must be a presence with join\(\) and leave\(\)/,
    ],
    [{ presence: tracker().presence, memberOf: 'user' }, TypeError, /memberOf must be a function, got "user"/],
  ])('refuses %o', (options, type, message) => {
    const server = new FakeServer();
    const make = () => heartbeat(server as never, { pingIntervalMs: 100, wheel, ...(options as HeartbeatOptions) });
    expect(make).toThrow(type);
    expect(make).toThrow(message);
    expect(server.listenerCount('connection')).toBe(0);
  });

  it('refuses presence on a single socket: it has no upgrade request to name a member', () => {
    expect(() =>
      heartbeat(new FakeSocket().ws, { pingIntervalMs: 100, wheel, presence: tracker().presence, memberOf }),
    ).toThrow(/presence needs a WebSocketServer/);
  });
});
