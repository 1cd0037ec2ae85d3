/**
 * deadlineInterceptor: the client entry function that gives calls a deadline and idle limit from the wheel.
 */
import { propagate as Propagate, status as Status } from '@grpc/grpc-js';
import type { InterceptingCall, Interceptor, InterceptorOptions } from '@grpc/grpc-js';
import { captureContext, currentDeadline, describeBudget, freshNow, sharedWheel } from '@tickwheel/core';
import { clientBudget } from './call-budget.js';
import { deadlineChannel, publishDeadline } from './channels.js';
import { DeadlineCall, type ClientMethodPlan } from './deadline-call.js';
import { belowMinBudgetDetails, spentDetails } from './details.js';
import { msUntil } from './grpc-timeout.js';
import { isTimeout } from './parent-abort.js';
import {
  DEFAULTS,
  optionalAmountMs,
  optionalLimitMs,
  optionalWheel,
  optionsObject,
  parseOverrides,
  serviceKeyOf,
} from './options.js';
import { RetryCall } from './retry-call.js';
import { parseRetry, type RetryPlan } from './retry-policy.js';
import { SpentCall } from './spent-call.js';
import type { DeadlineInterceptorOptions, DeadlineLimit, MethodDeadlineOptions } from './types.js';

/** The reason a handler's outgoing call is refused when its parent call was cancelled. */
const PARENT_CANCELLED =
  'Cancelled before the call started: the deadline it inherited was aborted (its parent call was cancelled)';

/**
 * A grpc-js client interceptor that puts every call under a deadline timed on a tickwheel
 * `TimingWheel`: one O(1) wheel handle per call, cancelled when the status arrives, instead of
 * grpc-js's own `setTimeout` per call.
 *
 * The call's deadline is the earliest of: the configured timeout (method override, else
 * service override, else `timeoutMs`), the caller's `deadline` call option, the `parent` call's
 * deadline, and the ambient `currentDeadline()` (inside a handler served with
 * `serverDeadlineInterceptor`, or a `withDeadline` block). It reaches the server as the usual
 * `grpc-timeout` header. When it passes, the call is cancelled with `DEADLINE_EXCEEDED` and
 * details naming the limit that fired, e.g.
 * `Deadline exceeded after 250 ms (method limit) on /shop.Cart/Get`. A call whose budget is
 * already spent fails at once without touching the network.
 *
 * Response streams may also have an idle limit (`streamIdleMs`): the longest silence between two
 * received messages before the call fails with `DEADLINE_EXCEEDED`.
 *
 * @param options - see {@link DeadlineInterceptorOptions}; all optional
 * @throws TypeError/RangeError, naming the option, for a bad timeout, key or wheel
 * @example
 * ```ts
 * const client = new shop.Cart('127.0.0.1:50051', credentials.createInsecure(), {
 *   interceptors: [deadlineInterceptor({ timeoutMs: 1_000, overrides: { '/shop.Cart/Checkout': 5_000 } })],
 * });
 * ```
 */
export function deadlineInterceptor(options?: DeadlineInterceptorOptions): Interceptor {
  const raw = optionsObject(options, 'options', [...METHOD_KEYS, 'overrides', 'wheel']);
  const timeoutMs = optionalLimitMs(raw.timeoutMs, 'timeoutMs') ?? DEFAULTS.timeoutMs;
  const streamIdleMs = optionalLimitMs(raw.streamIdleMs, 'streamIdleMs') ?? DEFAULTS.streamIdleMs;
  const reserveMs = optionalAmountMs(raw.reserveMs, 'reserveMs') ?? DEFAULTS.reserveMs;
  const minBudgetMs = optionalAmountMs(raw.minBudgetMs, 'minBudgetMs') ?? DEFAULTS.minBudgetMs;
  const retry = raw.retry === undefined ? undefined : parseRetry(raw.retry, 'retry');
  const overrides = parseOverrides(raw.overrides, 'overrides', parseMethodOptions);
  const wheelOption = optionalWheel(raw.wheel, 'wheel');

  const plans = new Map<string, ClientMethodPlan>();
  const planFor = (method: InterceptorOptions['method_definition']): ClientMethodPlan => {
    const path = method.path;
    let plan = plans.get(path);
    if (plan === undefined) {
      const service = overrides.services.get(serviceKeyOf(path));
      const own = overrides.methods.get(path);
      const [configuredMs, from]: [number, ClientMethodPlan['timeoutFrom']] =
        own?.timeoutMs !== undefined
          ? [own.timeoutMs, 'method']
          : service?.timeoutMs !== undefined
            ? [service.timeoutMs, 'service']
            : [timeoutMs, 'default'];
      plan = {
        path,
        timeoutMs: configuredMs,
        timeoutFrom: from,
        idleMs: method.responseStream ? (own?.streamIdleMs ?? service?.streamIdleMs ?? streamIdleMs) : Infinity,
        reserveMs: own?.reserveMs ?? service?.reserveMs ?? reserveMs,
        minBudgetMs: own?.minBudgetMs ?? service?.minBudgetMs ?? minBudgetMs,
        retry:
          method.requestStream || method.responseStream
            ? undefined
            : activeRetry(own?.retry ?? service?.retry ?? retry),
      };
      plans.set(path, plan);
    }
    return plan;
  };

  return (callOptions: InterceptorOptions, nextCall) => {
    const plan = planFor(callOptions.method_definition);
    const wheel = wheelOption ?? sharedWheel();
    const now = freshNow(wheel.clock); // a call costs far more than a clock read
    // The budget from `now`, and the limit that set it: the earliest deadline wins.
    let budgetMs = plan.timeoutMs;
    let limit: DeadlineLimit = plan.timeoutFrom;

    const explicit = callOptions.deadline;
    const hasExplicit = explicit !== undefined && explicit !== Infinity;
    const flags = callOptions.propagate_flags ?? Propagate.DEFAULTS;
    const parent = (flags & Propagate.DEADLINE) !== 0 ? callOptions.parent : undefined;
    // What the parent call and the ambient deadline leave, before the reserve.
    let propagatedMs = Infinity;
    if (hasExplicit || parent !== undefined) {
      const wallNow = Date.now();
      const explicitMs = hasExplicit ? msUntil(explicit, wallNow) : Infinity;
      if (explicitMs < budgetMs) {
        budgetMs = explicitMs;
        limit = 'explicit';
      }
      if (parent !== undefined) propagatedMs = msUntil(parent.getDeadline(), wallNow);
    }
    // A caller that names the `parent` call chose what it inherits with `propagate_flags`; the
    // ambient deadline is that same server call's (or an enclosing one), so the flags govern it too.
    const named = callOptions.parent !== undefined && callOptions.parent !== null;
    const ambient = named && (flags & Propagate.DEADLINE) === 0 ? undefined : currentDeadline();
    let ambientSignal: AbortSignal | undefined;
    // The ambient deadline when it, not the `parent` call, sets the propagated budget: named in a timeout's budget.
    let inherited: typeof ambient;
    if (ambient !== undefined) {
      const ambientMs = ambient.wheel.clock === wheel.clock ? ambient.expiresAt - now : ambient.remaining();
      if (ambientMs < propagatedMs) {
        propagatedMs = ambientMs;
        inherited = ambient;
      }
      if (!named || (flags & Propagate.CANCELLATION) !== 0) {
        ambientSignal = ambient.signal;
        if (ambientSignal.aborted && !isTimeout(ambientSignal.reason))
          return new SpentCall(Status.CANCELLED, PARENT_CANCELLED);
      }
    }
    if (propagatedMs !== Infinity) {
      // Headroom for the handler making the call: taken from the inherited budget only.
      propagatedMs -= plan.reserveMs;
      if (propagatedMs < budgetMs) {
        budgetMs = propagatedMs;
        limit = 'propagated';
      }
      if (limit === 'propagated' && budgetMs > 0 && budgetMs < plan.minBudgetMs) {
        const budget = clientBudget(limit, budgetMs, plan.reserveMs, inherited, 0, 0);
        publishDeadline('client', plan.path, limit, budgetMs, budget, captureContext(deadlineChannel));
        const details = belowMinBudgetDetails(budgetMs, plan.minBudgetMs, plan.path);
        return new SpentCall(Status.DEADLINE_EXCEEDED, `${details}; ${describeBudget(budget)}`, budget);
      }
    }
    if (budgetMs <= 0) {
      const budget = clientBudget(limit, budgetMs, plan.reserveMs, inherited, 0, 0);
      publishDeadline('client', plan.path, limit, 0, budget, captureContext(deadlineChannel));
      return new SpentCall(
        Status.DEADLINE_EXCEEDED,
        `${spentDetails(limit, plan.path)}; ${describeBudget(budget)}`,
        budget,
      );
    }

    // Nothing to time: the rest of the chain as it is (grpc-js only uses it through the interface, as below).
    if (budgetMs === Infinity && plan.idleMs === Infinity && plan.retry === undefined)
      return nextCall(callOptions) as unknown as InterceptingCall;
    // grpc-js would arm a setTimeout for an explicit or parent deadline; the wheel times it instead.
    const nextOptions =
      hasExplicit || parent !== undefined
        ? { ...callOptions, deadline: Infinity, propagate_flags: flags & ~Propagate.DEADLINE }
        : callOptions;
    if (plan.retry !== undefined) {
      const retried = new RetryCall(
        () => nextCall(nextOptions),
        wheel,
        plan,
        plan.retry,
        limit,
        now,
        budgetMs,
        ambientSignal,
        limit === 'propagated' ? inherited : undefined,
      );
      return retried as unknown as InterceptingCall;
    }
    const next = nextCall(nextOptions);
    const call = new DeadlineCall(
      next,
      wheel,
      plan,
      limit,
      now,
      budgetMs,
      ambientSignal,
      limit === 'propagated' ? inherited : undefined,
    );
    // grpc-js types an interceptor's result as its InterceptingCall class but only ever uses it
    // through InterceptingCallInterface (the next interceptor wraps it; the client calls it),
    // which DeadlineCall implements without the base class's unused per-call fields.
    return call as unknown as InterceptingCall;
  };
}

/** The settings a method (or service) override may carry, as the top-level options. */
const METHOD_KEYS = ['timeoutMs', 'streamIdleMs', 'reserveMs', 'minBudgetMs', 'retry'] as const;

/** A retry plan that retries at all, else none (`{ limit: 0 }` lifts a retry set above). */
function activeRetry(retry: RetryPlan | undefined): RetryPlan | undefined {
  return retry !== undefined && retry.limit > 0 ? retry : undefined;
}

/** An override's settings, checked: a method's options with its retry worked out. */
type MethodSettings = Omit<MethodDeadlineOptions, 'retry'> & { retry?: RetryPlan };

function parseMethodOptions(entry: unknown, name: string): MethodSettings {
  if (typeof entry === 'number') return { timeoutMs: optionalLimitMs(entry, name) };
  if (entry === undefined) throw new TypeError(`@tickwheel/grpc: ${name} must be a number or an object, got undefined`);
  const raw = optionsObject(entry, name, METHOD_KEYS);
  return {
    timeoutMs: optionalLimitMs(raw.timeoutMs, `${name}.timeoutMs`),
    streamIdleMs: optionalLimitMs(raw.streamIdleMs, `${name}.streamIdleMs`),
    reserveMs: optionalAmountMs(raw.reserveMs, `${name}.reserveMs`),
    minBudgetMs: optionalAmountMs(raw.minBudgetMs, `${name}.minBudgetMs`),
    retry: raw.retry === undefined ? undefined : parseRetry(raw.retry, `${name}.retry`),
  };
}
