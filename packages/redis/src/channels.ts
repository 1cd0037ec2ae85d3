/**
 * The `node:diagnostics_channel` channels of `@tickwheel/redis`: a timer fired (with its lateness
 * on the Redis server's clock), a lease lost, a duplicate delivery suppressed. `@tickwheel/otel`
 * turns them into metrics; anyone may subscribe by name.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:redis:fired` | {@link RedisFiredMessage} | a worker claimed a due timer and is about to run its handler |
 * | `tickwheel:redis:lease-lost` | {@link RedisLeaseLostMessage} | a worker's ack found its claim gone: the lease had expired and the timer was (or will be) delivered again |
 * | `tickwheel:redis:duplicate` | {@link RedisDuplicateMessage} | a delivery was dropped because this worker already runs or ran that delivery |
 *
 * A message is built only when the channel has subscribers, so with none a worker pays one
 * property read per event.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { TypedChannel } from '@tickwheel/core';

/** Name of the channel of {@link RedisFiredMessage}. */
export const REDIS_FIRED_CHANNEL = 'tickwheel:redis:fired';
/** Name of the channel of {@link RedisLeaseLostMessage}. */
export const REDIS_LEASE_LOST_CHANNEL = 'tickwheel:redis:lease-lost';
/** Name of the channel of {@link RedisDuplicateMessage}. */
export const REDIS_DUPLICATE_CHANNEL = 'tickwheel:redis:duplicate';

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

/** Published on `tickwheel:redis:lease-lost` when an ack finds the worker's claim gone. */
export interface RedisLeaseLostMessage {
  readonly namespace: string;
  readonly id: string;
  /** The delivery whose ack was refused. */
  readonly attempts: number;
}

/** Published on `tickwheel:redis:duplicate` when a delivery is dropped as a duplicate. */
export interface RedisDuplicateMessage {
  readonly namespace: string;
  readonly id: string;
}

/** @internal */
export const firedChannel: TypedChannel<RedisFiredMessage> = diagnosticsChannel.channel(REDIS_FIRED_CHANNEL);
/** @internal */
export const leaseLostChannel: TypedChannel<RedisLeaseLostMessage> =
  diagnosticsChannel.channel(REDIS_LEASE_LOST_CHANNEL);
/** @internal */
export const duplicateChannel: TypedChannel<RedisDuplicateMessage> =
  diagnosticsChannel.channel(REDIS_DUPLICATE_CHANNEL);

/** Publishes a fired timer when someone listens; `claimedAt` is the claim's time on the server clock. */
export function publishFired(namespace: string, id: string, dueAt: number, claimedAt: number, attempts: number): void {
  if (!firedChannel.hasSubscribers) return;
  firedChannel.publish({ namespace, id, dueAt, lateMs: claimedAt > dueAt ? claimedAt - dueAt : 0, attempts });
}

/** Publishes a lost lease when someone listens. */
export function publishLeaseLost(namespace: string, id: string, attempts: number): void {
  if (leaseLostChannel.hasSubscribers) leaseLostChannel.publish({ namespace, id, attempts });
}

/** Publishes a suppressed duplicate when someone listens. */
export function publishDuplicate(namespace: string, id: string): void {
  if (duplicateChannel.hasSubscribers) duplicateChannel.publish({ namespace, id });
}
