/**
 * @tickwheel/redis's diagnostics channels: fired, lease-lost, duplicate, presence and node-reaped messages and their publish helpers.
 *
 * The `node:diagnostics_channel` channels of `@tickwheel/redis`: a timer fired (with its lateness
 * on the Redis server's clock), a lease lost, a duplicate delivery suppressed. `@tickwheel/otel`
 * turns them into metrics; anyone may subscribe by name.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:redis:fired` | {@link RedisFiredMessage} | a worker claimed a due timer and is about to run its handler |
 * | `tickwheel:redis:lease-lost` | {@link RedisLeaseLostMessage} | Redis refused a worker's ack or failure report: its lease had passed and its fencing token is stale, so the timer is (or was) delivered again |
 * | `tickwheel:redis:duplicate` | {@link RedisDuplicateMessage} | a worker did not start a claimed delivery because its lease passed before the handler could run: another worker may hold the timer now, and running it here too would duplicate it |
 * | `tickwheel:redis:presence` | {@link RedisPresenceMessage} | a `RedisPresence` emitted `'join'` or `'leave'` (on the one server that emits it) |
 * | `tickwheel:redis:node-reaped` | {@link RedisNodeReapedMessage} | a `RedisPresence` ended the connections of a server whose lease ran out (or of its own, on `stop()` or after it lost its lease) |
 *
 * A message is built only when the channel has subscribers, so with none a worker pays one
 * property read per event.
 */
import { guardedPublisher, typedChannel } from '@tickwheel/core/internal';

/** Name of the channel of {@link RedisFiredMessage}. */
export const REDIS_FIRED_CHANNEL = 'tickwheel:redis:fired';
/** Name of the channel of {@link RedisLeaseLostMessage}. */
export const REDIS_LEASE_LOST_CHANNEL = 'tickwheel:redis:lease-lost';
/** Name of the channel of {@link RedisDuplicateMessage}. */
export const REDIS_DUPLICATE_CHANNEL = 'tickwheel:redis:duplicate';

/** Name of the channel of {@link RedisPresenceMessage}. */
export const REDIS_PRESENCE_CHANNEL = 'tickwheel:redis:presence';
/** Name of the channel of {@link RedisNodeReapedMessage}. */
export const REDIS_NODE_REAPED_CHANNEL = 'tickwheel:redis:node-reaped';

/** Published on `tickwheel:redis:fired` for each claimed timer, before its handler runs. */
export interface RedisFiredMessage {
  /** The `RedisTimers` namespace. */
  readonly namespace: string;
  readonly id: string;
  /** When it was due, epoch ms on the Redis server's clock. */
  readonly dueAt: number;
  /** How long after `dueAt` the claim happened, in ms on the Redis server's clock (>= 0). */
  readonly lateMs: number;
  /** Deliveries so far, this one included. */
  readonly attempts: number;
}

/** Published on `tickwheel:redis:lease-lost` when Redis refuses a stale ack or failure report. */
export interface RedisLeaseLostMessage {
  readonly namespace: string;
  readonly id: string;
  /** The delivery whose report was refused. */
  readonly attempts: number;
  /** What was refused: the ack of a handler that resolved, or the report of one that failed. */
  readonly stage: 'ack' | 'fail';
}

/** Published on `tickwheel:redis:duplicate` when a claimed delivery is dropped before its handler ran. */
export interface RedisDuplicateMessage {
  readonly namespace: string;
  readonly id: string;
  /** The delivery that was dropped. */
  readonly attempts: number;
}

/** Published on `tickwheel:redis:presence` when a RedisPresence emits `'join'` or `'leave'`. */
export interface RedisPresenceMessage {
  /** The `RedisPresence` namespace. */
  readonly namespace: string;
  readonly member: string;
  readonly event: 'join' | 'leave';
  /**
   * For a leave: how long after its grace period ended the member left, in ms on the Redis
   * server's clock (>= 0). 0 for a join.
   */
  readonly lateMs: number;
}

/** Published on `tickwheel:redis:node-reaped` once a server's connections were ended. */
export interface RedisNodeReapedMessage {
  readonly namespace: string;
  /** The id of the server's registration (`RedisPresence.nodeId` while it held it). */
  readonly node: string;
  /** How many of its connections this reap ended (0 when another server got there first). */
  readonly connections: number;
}

/** @internal */
export const firedChannel = typedChannel<RedisFiredMessage>(REDIS_FIRED_CHANNEL);
/** @internal */
export const leaseLostChannel = typedChannel<RedisLeaseLostMessage>(REDIS_LEASE_LOST_CHANNEL);
/** @internal */
export const duplicateChannel = typedChannel<RedisDuplicateMessage>(REDIS_DUPLICATE_CHANNEL);

/** Publishes a fired timer when someone listens; `claimedAt` is the claim's time on the server clock. */
export const publishFired = guardedPublisher(
  firedChannel,
  (namespace: string, id: string, dueAt: number, claimedAt: number, attempts: number): RedisFiredMessage => ({
    namespace,
    id,
    dueAt,
    lateMs: claimedAt > dueAt ? claimedAt - dueAt : 0,
    attempts,
  }),
);

/** @internal */
export const presenceChannel = typedChannel<RedisPresenceMessage>(REDIS_PRESENCE_CHANNEL);
/** @internal */
export const nodeReapedChannel = typedChannel<RedisNodeReapedMessage>(REDIS_NODE_REAPED_CHANNEL);

/** Publishes a join or a leave when someone listens; `lateMs` as in {@link RedisPresenceMessage}. */
export const publishPresence = guardedPublisher(
  presenceChannel,
  (namespace: string, member: string, event: 'join' | 'leave', lateMs: number): RedisPresenceMessage => ({
    namespace,
    member,
    event,
    lateMs: lateMs > 0 ? lateMs : 0,
  }),
);

/** Publishes a reaped node when someone listens. */
export const publishNodeReaped = guardedPublisher(
  nodeReapedChannel,
  (namespace: string, node: string, connections: number): RedisNodeReapedMessage => ({ namespace, node, connections }),
);

const publishDuplicate = guardedPublisher(
  duplicateChannel,
  (namespace: string, id: string, attempts: number): RedisDuplicateMessage => ({ namespace, id, attempts }),
);
const publishLeaseLost = guardedPublisher(
  leaseLostChannel,
  (namespace: string, id: string, attempts: number, stage: 'ack' | 'fail'): RedisLeaseLostMessage => ({
    namespace,
    id,
    attempts,
    stage,
  }),
);

/**
 * Publishes what the worker reports as stale, when someone listens: a delivery not started
 * (`'start'`) is a suppressed duplicate, a refused ack or failure report a lost lease.
 */
export function publishStale(namespace: string, id: string, attempts: number, stage: 'start' | 'ack' | 'fail'): void {
  if (stage === 'start') publishDuplicate(namespace, id, attempts);
  else publishLeaseLost(namespace, id, attempts, stage);
}
