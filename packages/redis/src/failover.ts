/**
 * Riding out a failover: which Redis errors are transient, and the bounded retry loop for idempotent calls.
 *
 * A master failover (Cluster) or a restart (single Redis) shows up as a handful of errors while
 * the client reconnects and refreshes its slot map: `CLUSTERDOWN`, `TRYAGAIN`, `LOADING`,
 * `READONLY` (a demoted master), `Too many Cluster redirections`, `Connection is closed`,
 * `ECONNREFUSED`, ioredis's `MaxRetriesPerRequestError` and `AbortError` (a command aborted
 * as its connection closed), and `MOVED` where ioredis does not follow
 * it itself (a Cluster pipeline). Every script @tickwheel/redis runs is
 * idempotent (a schedule is keyed by id, a claim reply that is lost only delays a timer until
 * its lease ends, acks and failure reports are fenced by the token), so repeating it after such an
 * error is safe, whether or not the first try was applied.
 *
 * The loop retries after 20 ms, doubling to at most 1 s, with jitter, and stops when the budget
 * is spent. Each try is raced against {@link TRY_TIMEOUT_MS} (and the budget left): during a
 * failover ioredis's Cluster can leave a command queued long after the slot has a new master,
 * and a client set to queue forever (`maxRetriesPerRequest: null`) would do the same. An abandoned try
 * may still be applied later, which the idempotence above makes harmless.
 *
 * Every wait here (a try's race, the pause before a retry, the budget itself) is on the wheel
 * and its clock (the `wheel` option), like every other wait of the package: a `ManualClock`
 * drives the whole loop in tests (see the package README, "Which clock").
 */
import { freshNow, type TimerHandle, type TimingWheel } from '@tickwheel/core';
import { lastConnectionError } from './connection-error.js';

/** The first wait after a transient error; doubles per retry up to {@link MAX_RETRY_DELAY_MS}. */
export const FIRST_RETRY_DELAY_MS = 20;
export const MAX_RETRY_DELAY_MS = 1_000;
/** The longest one try may take before it is abandoned and retried. */
export const TRY_TIMEOUT_MS = 2_000;

const TRANSIENT = new RegExp(
  [
    'CLUSTERDOWN',
    'TRYAGAIN',
    'MASTERDOWN',
    'LOADING',
    'READONLY',
    'NOREPLICAS',
    'replicas? acknowledged',
    'Too many Cluster redirections',
    'Connection is closed',
    'Command aborted due to connection close',
    'Connection (is )?lost',
    'Cluster isn.t ready',
    'Failed to refresh slots cache',
    'None of startup nodes is available',
    'max retries per request',
    "Stream isn't writeable",
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'EPIPE',
    'EHOSTUNREACH',
    'ENOTCONN',
    'did not answer within',
    'TICKWHEEL_LATE',
    '^(MOVED|ASK) ',
  ].join('|'),
  'i',
);

/**
 * Whether an error is one a failover or a restart produces (so the same call may succeed soon),
 * rather than one of the call itself (a script error, a wrong type).
 */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  const text = `${error.message} ${error.name} ${typeof code === 'string' ? code : ''}`;
  if (TRANSIENT.test(text) || error.name === 'MaxRetriesPerRequestError' || error.name === 'ClusterAllFailedError')
    return true;
  const cause =
    (error as { lastNodeError?: unknown; cause?: unknown }).lastNodeError ?? (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isTransient(cause);
}

/**
 * Thrown when Redis stayed unreachable (or the cluster down) for the whole failover budget.
 * `cause` is the last Redis error; `connectionError` the client's last connection error, which
 * says why (`ECONNREFUSED`) when the last try only went unanswered.
 */
export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
  /** Tries made, the first included. */
  readonly attempts: number;
  /** The client's last connection error (`connect ECONNREFUSED 127.0.0.1:6390`), when its socket failed. */
  readonly connectionError: Error | undefined;

  /** @param client - the ioredis client the calls went to, whose last connection error is named */
  constructor(what: string, budgetMs: number, attempts: number, cause: unknown, retrySafe: string, client?: unknown) {
    const last = cause instanceof Error ? cause.message : String(cause);
    const connectionError = lastConnectionError(client);
    const why =
      connectionError === undefined || connectionError === cause || last.includes(connectionError.message)
        ? ''
        : `; last connection error: ${connectionError.message}`;
    super(
      `@tickwheel/redis: ${what} failed: Redis was unavailable for the whole failoverBudgetMs (${budgetMs} ms, ` +
        `${attempts} ${attempts === 1 ? 'try' : 'tries'}; last error: ${last}${why}). It may or may not have been applied; ${retrySafe}`,
      { cause },
    );
    this.attempts = attempts;
    this.connectionError = connectionError;
  }
}

/** The wait before retry number `retry` (0-based): exponential from 20 ms, capped, full jitter. */
export function retryDelayMs(retry: number, capMs = MAX_RETRY_DELAY_MS, random = Math.random()): number {
  const ceiling = Math.min(capMs, FIRST_RETRY_DELAY_MS * 2 ** Math.min(retry, 20));
  return Math.max(1, Math.round(ceiling / 2 + (random * ceiling) / 2));
}

class BudgetTimeout extends Error {
  override readonly name = 'BudgetTimeout';
}

/**
 * `promise`, or a rejection `ms` after now on `wheel` ("did not answer within", a transient error).
 * Counted from a fresh reading, not the job's (see `freshNow`): a burst of calls made in one long
 * job must not be abandoned early, and a Redis call dwarfs the cost of the read.
 */
export function raced<T>(wheel: TimingWheel, promise: Promise<T>, ms: number): Promise<T> {
  let timer: TimerHandle | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = wheel.scheduleAt(freshNow(wheel.clock) + ms, () =>
      reject(new BudgetTimeout(`Redis did not answer within ${Math.round(ms)} ms`)),
    );
  });
  promise.catch(() => undefined); // a late rejection after the race is lost on purpose
  return Promise.race([promise, timeout]).finally(() => timer?.cancel());
}

/**
 * Runs `call` until it succeeds, retrying transient errors within `budgetMs` (0: one try, no race),
 * every wait on `wheel`. Each try is told how long it has before it is abandoned (Infinity: never),
 * so a write can carry the moment after which Redis must refuse it (see ShardCalls.run).
 *
 * @param what - the operation, for the error message (`schedule("buff:42")`)
 * @param retrySafe - the sentence saying why retrying is safe, for the error message
 * @param tryTimeoutMs - the longest one try may take
 * @param onRetry - called before each retry (to refresh a Cluster's slot map, say)
 * @param client - the ioredis client called, whose last connection error the {@link RedisUnavailableError} names
 * @throws the call's own error when it is not transient; {@link RedisUnavailableError} when the budget is spent
 */
export async function withFailoverBudget<T>(
  wheel: TimingWheel,
  call: (tryMs: number) => Promise<T>,
  budgetMs: number,
  what: string,
  retrySafe: string,
  tryTimeoutMs = TRY_TIMEOUT_MS,
  onRetry?: () => void,
  client?: unknown,
): Promise<T> {
  if (budgetMs <= 0) return call(Infinity);
  const clock = wheel.clock;
  const deadline = freshNow(clock) + budgetMs;
  for (let tries = 1; ; tries++) {
    let error: unknown;
    try {
      const tryMs = Math.max(1, Math.min(tryTimeoutMs, deadline - freshNow(clock)));
      return await raced(wheel, call(tryMs), tryMs);
    } catch (caught) {
      error = caught;
    }
    if (!(error instanceof BudgetTimeout) && !isTransient(error)) throw error;
    const left = deadline - freshNow(clock);
    if (left <= 0) throw new RedisUnavailableError(what, budgetMs, tries, error, retrySafe, client);
    onRetry?.();
    await new Promise<void>((resolve) => wheel.schedule(Math.min(left, retryDelayMs(tries - 1)), () => resolve()));
  }
}

/**
 * Asks an ioredis Cluster to re-read its slot map (a no-op on a client without one): after a
 * failover, commands keep going to the dead master until the map is refreshed.
 */
export function refreshSlots(client: object): void {
  const refresh = (client as { refreshSlotsCache?: (callback?: (error?: Error) => void) => void }).refreshSlotsCache;
  if (typeof refresh === 'function') refresh.call(client, () => undefined);
}
