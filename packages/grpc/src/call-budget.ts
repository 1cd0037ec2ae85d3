/**
 * The TimeoutBudget of a gRPC call that one of our limits ended, named as the options name them.
 */
import { status as Status } from '@grpc/grpc-js';
import type { StatusObject } from '@grpc/grpc-js';
import type { Deadline, TimeoutBudget } from '@tickwheel/core';
import { inheritedBudget, ownBudget, timeoutBudget } from '@tickwheel/core/internal';
import type { DeadlineLimit, ServerDeadlineLimit } from './types.js';

/** The option a client limit stands for (`'deadline'` is the inherited one, as core names it). */
const CLIENT_LIMITS: Record<DeadlineLimit, string> = {
  default: 'timeoutMs',
  service: 'timeoutMs',
  method: 'timeoutMs',
  explicit: 'callOptions.deadline',
  propagated: 'deadline',
};

/**
 * The budget of a client call ended by its deadline.
 *
 * @param budgetMs - what the call had from its start (after `reserveMs` when propagated)
 * @param ambient - the ambient deadline, when it set a propagated budget (not the `parent` call's)
 */
export function clientBudget(
  limit: DeadlineLimit,
  budgetMs: number,
  reserveMs: number,
  ambient: Deadline | undefined,
  elapsedMs: number,
  lateMs: number,
): TimeoutBudget {
  if (limit !== 'propagated') return ownBudget(CLIENT_LIMITS[limit], budgetMs, elapsedMs, lateMs);
  const leftAtStart = budgetMs + reserveMs;
  if (ambient !== undefined) return inheritedBudget(ambient, leftAtStart, elapsedMs, lateMs);
  // The `parent` call's deadline: its whole budget stays with the server that set it.
  return timeoutBudget({
    limit: 'deadline',
    inherited: true,
    source: 'grpc',
    budgetMs: leftAtStart,
    spentBeforeMs: 0,
    elapsedMs,
    lateMs,
  });
}

/** The option or source a server limit stands for. */
export const SERVER_SOURCES: Record<ServerDeadlineLimit, string> = {
  propagated: 'grpc',
  default: 'defaultTimeoutMs',
  max: 'maxTimeoutMs',
};

/** The budget of a server call ended by its deadline: the client's (inherited), or the server's own cap or default. */
export function serverBudget(
  limit: ServerDeadlineLimit,
  budgetMs: number,
  elapsedMs: number,
  lateMs: number,
): TimeoutBudget {
  if (limit !== 'propagated') return ownBudget(SERVER_SOURCES[limit], budgetMs, elapsedMs, lateMs);
  return timeoutBudget({
    limit: 'deadline',
    inherited: true,
    source: 'grpc',
    budgetMs,
    spentBeforeMs: 0,
    elapsedMs,
    lateMs,
  });
}

/**
 * `status` with `budget` beside its fields, on a new object (the status is grpc-js's and stays
 * untouched): grpc-js makes the caller's error with `Object.assign(error, status)`, so `budget` lands on it.
 */
export function withBudget(status: StatusObject, budget: TimeoutBudget | undefined): StatusObject {
  if (budget === undefined || status.code !== Status.DEADLINE_EXCEEDED) return status;
  const carried: StatusObject & { budget: TimeoutBudget } = { ...status, budget };
  return carried;
}
