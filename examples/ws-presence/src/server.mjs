/**
 * One ws server process of the example: a WebSocketServer whose heartbeat tracks each
 * connection in a RedisPresence shared with the other server through Redis. It reports its
 * presence events to the parent over IPC. Configured by env: REDIS_URL, NAMESPACE, SERVER (its
 * name), GRACE_MS, NODE_TTL_MS.
 */
import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import { RedisPresence } from '@tickwheel/redis';
import { heartbeat } from '@tickwheel/ws';

const { REDIS_URL, NAMESPACE, SERVER, GRACE_MS, NODE_TTL_MS } = process.env;
const redis = new Redis(REDIS_URL);
const presence = new RedisPresence({
  redis,
  namespace: NAMESPACE,
  graceMs: Number(GRACE_MS),
  nodeTtlMs: Number(NODE_TTL_MS),
});
const report =
  (type) =>
  ({ member }) =>
    process.send({ type, server: SERVER, member, at: Date.now() });
presence.on('join', report('join'));
presence.on('leave', report('leave'));
presence.on('error', (error) => process.send({ type: 'error', server: SERVER, message: String(error) }));
await presence.start();

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
heartbeat(wss, {
  presence,
  // A real server takes the member from a verified token or session; the example trusts ?user=.
  memberOf: (request) => new URL(request.url, 'http://localhost').searchParams.get('user') ?? undefined,
  pingIntervalMs: 1_000,
  pongTimeoutMs: 500,
});
wss.on('listening', () => process.send({ type: 'ready', server: SERVER, port: wss.address().port }));

process.on('message', async (message) => {
  if (message !== 'stop') return;
  for (const socket of wss.clients) socket.close(1001, 'server stopping');
  wss.close();
  await presence.stop();
  redis.disconnect();
  process.exit(0);
});
// Never outlive the parent.
process.on('disconnect', () => process.exit(0));
