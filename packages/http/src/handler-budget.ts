/**
 * The TimeoutBudget of a request whose handler deadline passed, named by where the deadline came from.
 */
import type { DeadlineScope, TimeoutBudget } from '@tickwheel/core';
import { timeoutBudget } from '@tickwheel/core/internal';

/** The prefix of a source that is the caller's header: the deadline was inherited, not the server's own. */
const HEADER = 'header:';

/**
 * Where the time of `scope` went when it passed: the caller's deadline (`source`
 * `'header:<name>'`, inherited) or the server's own limit (`'defaultTimeoutMs'`, `'timeoutFor'`,
 * `'maxTimeoutMs'`, a framework adapter's `timeoutMs`), its elapsed time and how late it fired.
 */
export function handlerBudget(source: string, limitMs: number, scope: DeadlineScope): TimeoutBudget {
  const now = scope.wheel.clock.now();
  const inherited = source.startsWith(HEADER);
  return timeoutBudget({
    limit: inherited ? 'deadline' : source,
    inherited,
    source: inherited ? source : undefined,
    budgetMs: limitMs,
    spentBeforeMs: 0,
    elapsedMs: now - scope.startedAt,
    lateMs: now - scope.expiresAt,
  });
}
