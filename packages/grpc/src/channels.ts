/**
 * @tickwheel/grpc's diagnostics channels: deadline and handler-abort messages and their publish helpers.
 *
 * The `node:diagnostics_channel` channels of `@tickwheel/grpc`: a deadline that ended a call
 * (client or server side), and a server handler aborted. `@tickwheel/otel` turns them into
 * metrics and span events; anyone may subscribe by name.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:grpc:deadline` | {@link GrpcDeadlineMessage} | a call ended with `DEADLINE_EXCEEDED` from one of our limits, or was refused because its budget was spent |
 * | `tickwheel:grpc:handler-abort` | {@link GrpcHandlerAbortMessage} | a server handler's signal aborted: its deadline passed, the client cancelled, or an enclosing deadline was aborted |
 *
 * A message is built only when the channel has subscribers, so with none a call pays one
 * property read per event. Messages carry `context`: what a subscriber of
 * `tickwheel:core:capture-context` stored when the call started (the OpenTelemetry bridge: the
 * caller's `Context`, so a client deadline lands on the caller's span).
 */
import type { TimeoutBudget } from '@tickwheel/core';
import { guardedPublisher, typedChannel } from '@tickwheel/core/internal';
import type { DeadlineLimit, ServerDeadlineLimit } from './types.js';

/** Name of the channel of {@link GrpcDeadlineMessage}. */
export const GRPC_DEADLINE_CHANNEL = 'tickwheel:grpc:deadline';
/** Name of the channel of {@link GrpcHandlerAbortMessage}. */
export const GRPC_HANDLER_ABORT_CHANNEL = 'tickwheel:grpc:handler-abort';

/** Which side's interceptor ended the call. */
export type GrpcSide = 'client' | 'server';

/** Published on `tickwheel:grpc:deadline` when one of our limits ends a call. */
export interface GrpcDeadlineMessage {
  readonly side: GrpcSide;
  /** The method path, `'/pkg.Service/Method'`. */
  readonly path: string;
  /** The limit that fired, as named in the status details; `'stream-idle'` for a response stream's idle limit. */
  readonly limit: DeadlineLimit | ServerDeadlineLimit | 'stream-idle';
  /** The time the call had when it started, in ms (the idle limit for `'stream-idle'`). */
  readonly budgetMs: number;
  /** Time from the call's start to the deadline, in ms (0 for a call refused with its budget spent). */
  readonly elapsedMs: number;
  /** True when the deadline came from a parent: the caller's server call or `grpc-timeout` header, the `parent` option or an ambient deadline. */
  readonly propagated: boolean;
  /**
   * Where the call's time went (core's shape): the option that fired or `'deadline'`, the
   * inherited deadline's source (`'grpc'` on a server, or the ambient deadline's on a client),
   * the time spent before and in the call, and how late the timer ran.
   */
  readonly budget: TimeoutBudget;
  /** The context the call started in, from `tickwheel:core:capture-context` (undefined without a subscriber there). */
  readonly context: unknown;
}

/** Why a server handler's signal aborted. */
export type HandlerAbortReason = 'deadline' | 'client-cancelled' | 'parent-aborted';

/** Published on `tickwheel:grpc:handler-abort` when a server handler's `currentDeadline().signal` aborts. */
export interface GrpcHandlerAbortMessage {
  readonly path: string;
  readonly reason: HandlerAbortReason;
  /** Time from the call's arrival to the abort, in ms. */
  readonly elapsedMs: number;
  /** As in {@link GrpcDeadlineMessage}. */
  readonly context: unknown;
}

/** @internal */
export const deadlineChannel = typedChannel<GrpcDeadlineMessage>(GRPC_DEADLINE_CHANNEL);
/** @internal */
export const handlerAbortChannel = typedChannel<GrpcHandlerAbortMessage>(GRPC_HANDLER_ABORT_CHANNEL);

/** Publishes a deadline when someone listens. `context`: the call's, from `captureContext`. */
export const publishDeadline = guardedPublisher(
  deadlineChannel,
  (
    side: GrpcSide,
    path: string,
    limit: GrpcDeadlineMessage['limit'],
    budgetMs: number,
    budget: TimeoutBudget,
    context: unknown,
  ): GrpcDeadlineMessage => ({
    side,
    path,
    limit,
    budgetMs,
    elapsedMs: budget.elapsedMs,
    propagated: limit === 'propagated',
    budget,
    context,
  }),
);

/** Publishes a handler abort when someone listens. */
export const publishHandlerAbort = guardedPublisher(
  handlerAbortChannel,
  (path: string, reason: HandlerAbortReason, elapsedMs: number, context: unknown): GrpcHandlerAbortMessage => ({
    path,
    reason,
    elapsedMs,
    context,
  }),
);
