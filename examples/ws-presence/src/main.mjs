/**
 * ws-presence: two ws server processes share presence through @tickwheel/redis's RedisPresence,
 * wired in by @tickwheel/ws's heartbeat (`presence`, `memberOf`). Users connect to either server;
 * alice moves from server A to server B within the grace period and nobody sees her leave; then
 * server A is SIGKILLed, and its users leave once each, announced by server B, after the dead
 * server's lease ran out and their grace passed.
 *
 * Run: `node examples/ws-presence/src/main.mjs` (uses REDIS_URL, or starts a private
 * redis-server on a free loopback port).
 */
import { fork } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WebSocket } from 'ws';
// The same way to find or start a Redis as the cluster-timers example: one implementation.
import { provideRedis } from '../../cluster-timers/src/redis-server.mjs';

const SERVER_PATH = fileURLToPath(new URL('./server.mjs', import.meta.url));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Forks a server process and resolves with its port once it listens. */
function startServer(name, env, onEvent) {
  const child = fork(SERVER_PATH, [], {
    env: { ...process.env, ...env, SERVER: name },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    const timeout = setTimeout(() => reject(new Error(`server ${name} did not start within 15 s`)), 15_000);
    child.on('message', (message) => {
      if (message.type === 'ready') {
        clearTimeout(timeout);
        resolve(message.port);
      } else onEvent(message);
    });
    child.once('exit', () => {
      clearTimeout(timeout);
      reject(new Error(`server ${name} exited before it was ready`));
    });
  });
  return { name, child, ready, exited };
}

/** A client connection of `user` to the server on `port`, open. */
function connect(port, user) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/?user=${encodeURIComponent(user)}`);
  socket.on('error', () => undefined); // the killed server's sockets end with an error
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

async function waitFor(predicate, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Runs the scenario.
 *
 * @param {object} [options]
 * @param {string} [options.redisUrl] - a Redis to use; default `process.env.REDIS_URL`, else a private redis-server
 * @param {number} [options.graceMs] - how long a user stays after its last connection, default 1500
 * @param {number} [options.nodeTtlMs] - a server's lease, default 1500
 * @param {(line: string) => void} [options.print] - default console.log
 * @returns {Promise<object>} every join and leave with the server that announced it, and the timings (or why it was skipped)
 */
export async function main({
  redisUrl = process.env.REDIS_URL,
  graceMs = 1_500,
  nodeTtlMs = 1_500,
  print = console.log,
} = {}) {
  const redis = await provideRedis({ redisUrl });
  if ('skipped' in redis) {
    print(`ws-presence skipped: ${redis.skipped}`);
    return { skipped: redis.skipped, summary: `skipped: ${redis.skipped}` };
  }
  const namespace = `ws-presence-${process.pid}-${Date.now()}`;
  const env = { REDIS_URL: redis.url, NAMESPACE: namespace, GRACE_MS: String(graceMs), NODE_TTL_MS: String(nodeTtlMs) };
  const events = [];
  const errors = [];
  let t0 = Date.now(); // from when both servers are up
  const onEvent = (message) => {
    if (message.type === 'error') return void errors.push(message);
    events.push({ ...message, at: message.at - t0 });
    print(
      `  ${String(message.at - t0).padStart(5)} ms  server ${message.server}: ${message.member} ${message.type === 'join' ? 'joined' : 'left'}`,
    );
  };
  const servers = [startServer('A', env, onEvent), startServer('B', env, onEvent)];
  const sockets = [];
  const ofType = (type, member) => events.filter((e) => e.type === type && e.member === member);
  try {
    const [portA, portB] = await Promise.all(servers.map((s) => s.ready));
    t0 = Date.now();
    print(
      `Redis: ${redis.source}; servers A (:${portA}) and B (:${portB}), grace ${graceMs} ms, lease ${nodeTtlMs} ms`,
    );

    print('alice, bob and dave connect to A, carol to B:');
    const alice = await connect(portA, 'alice');
    sockets.push(alice, await connect(portA, 'bob'), await connect(portA, 'dave'), await connect(portB, 'carol'));
    await waitFor(() => events.filter((e) => e.type === 'join').length >= 4, 'four joins', 10_000);

    print("alice's tab reconnects to B (her connection to A closes first):");
    const movedAt = Date.now() - t0;
    alice.close();
    await new Promise((resolve) => alice.once('close', resolve));
    sockets.push(await connect(portB, 'alice'));
    await sleep(graceMs + 1_000);
    print(`  no leave for alice ${graceMs + 1_000} ms after her move: ${ofType('leave', 'alice').length === 0}`);

    const killedAt = Date.now() - t0;
    servers[0].child.kill('SIGKILL');
    await servers[0].exited;
    print(`SIGKILL server A at ${killedAt} ms; bob and dave do not reconnect:`);
    const bound = nodeTtlMs + graceMs + 1_000;
    await waitFor(
      () => ofType('leave', 'bob').length > 0 && ofType('leave', 'dave').length > 0,
      'bob and dave leave',
      bound + 5_000,
    );
    await sleep(1_000); // nothing else comes
    const leaves = events.filter((e) => e.type === 'leave');
    const afterKill = leaves.map((e) => ({ member: e.member, server: e.server, afterKillMs: e.at - killedAt }));
    print(
      `leaves: ${afterKill.map((l) => `${l.member} on ${l.server} ${l.afterKillMs} ms after the kill`).join(', ')} (bound: lease + grace + 1 s = ${bound} ms)`,
    );

    return {
      summary: `2 servers, shared presence: alice moved A -> B with ${ofType('leave', 'alice').length} leaves; A SIGKILLed, ${afterKill.map((l) => l.member).join(' and ')} left once each on B within ${Math.max(...afterKill.map((l) => l.afterKillMs))} ms`,
      redis: redis.source,
      graceMs,
      nodeTtlMs,
      movedAt,
      killedAt,
      joins: events.filter((e) => e.type === 'join').map((e) => ({ member: e.member, server: e.server })),
      leaves: afterKill,
      errors,
    };
  } finally {
    for (const socket of sockets) socket.terminate();
    const live = servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null);
    for (const s of live) s.child.send('stop');
    await Promise.race([Promise.all(live.map((s) => s.exited)), sleep(5_000)]);
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    await redis.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await main();
  console.log(result.summary);
}
