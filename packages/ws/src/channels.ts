/**
 * @tickwheel/ws's diagnostics channel: the terminate message and its publish helper.
 *
 * The `node:diagnostics_channel` channel of `@tickwheel/ws`: a connection the heartbeat ended.
 * `@tickwheel/otel` counts them; anyone may subscribe by name.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:ws:terminate` | {@link WsTerminateMessage} | the heartbeat terminated a peer that left a ping unanswered, or started closing an idle connection (`closeOnIdle`), or ended one at a connection limit |
 *
 * The message is built only when the channel has subscribers, so with none a connection pays
 * one property read per termination and nothing while it lives. It is published before the
 * controller's `'dead'`/`'idle'` listeners run.
 */
import { guardedPublisher, typedChannel } from '@tickwheel/core/internal';
import type { IdleKind, LimitKind } from './types.js';

/** Name of the channel of {@link WsTerminateMessage}. */
export const WS_TERMINATE_CHANNEL = 'tickwheel:ws:terminate';

/** Why the heartbeat ended a connection: an unanswered ping, which kind of idleness (with `closeOnIdle`), or which limit. */
export type TerminateReason = 'pong-timeout' | `idle-${IdleKind}` | `limit-${LimitKind}`;

/** Published on `tickwheel:ws:terminate` when the heartbeat ends a connection. */
export interface WsTerminateMessage {
  readonly reason: TerminateReason;
  /** How long the connection had been quiet, in ms: since the unanswered ping, or since the last activity of the idle kind. */
  readonly quietMs: number;
  /** The limit that was exceeded, in ms (`pongTimeoutMs`, the idle kind's `<kind>IdleMs`, `firstMessageMs`, `maxLifetimeMs` or `drainTimeoutMs`). */
  readonly limitMs: number;
  /** The socket: terminated for `'pong-timeout'`, closing for an idle reason. */
  readonly socket: object;
  /** Whether the socket is a server's connection or a client watching its server. */
  readonly side: 'server' | 'client';
}

/** @internal */
export const terminateChannel = typedChannel<WsTerminateMessage>(WS_TERMINATE_CHANNEL);

/** Publishes a termination when someone listens. */
export const publishTerminate = guardedPublisher(
  terminateChannel,
  (
    reason: TerminateReason,
    quietMs: number,
    limitMs: number,
    socket: object,
    side: 'server' | 'client',
  ): WsTerminateMessage => ({ reason, quietMs, limitMs, socket, side }),
);
