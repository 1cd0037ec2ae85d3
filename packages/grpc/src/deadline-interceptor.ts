/**
 * deadlineInterceptor: the client entry function that gives calls a deadline and idle limit from the wheel.
 * Must not depend on: the server interceptor or another adapter.
 */
import { InterceptingCall, propagate as Propagate, status as Status } from '@grpc/grpc-js';
import type { Interceptor, InterceptorOptions } from '@grpc/grpc-js';
import { captureContext, currentDeadline, freshNow, sharedWheel } from '@tickwheel/core';
import { deadlineChannel, publishDeadline } from './channels.js';
import { DeadlineCall } from './deadline-call.js';
import { spentDetails } from './details.js';
import { msUntil } from './grpc-timeout.js';
import { isTimeout } from './parent-abort.js';
import { DEFAULTS, optionalLimitMs, optionalWheel, optionsObject, parseOverrides, serviceKeyOf } from './options.js';
import { SpentCall } from './spent-call.js';
import type { DeadlineInterceptorOptions, DeadlineLimit, MethodDeadlineOptions } from './types.js';

/** One setting and where it came from. */
interface Setting {
  readonly ms: number;
  readonly from: DeadlineLimit;
}

/** What the options say about one method, worked out on its first call and kept. */
interface MethodPlan {
  readonly timeout: Setting;
  readonly streamIdleMs: number;
}

const NONE: Setting = { ms: Infinity, from: 'default' };

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
  const raw = optionsObject(options, 'options', ['timeoutMs', 'streamIdleMs', 'overrides', 'wheel']);
  const timeoutMs = optionalLimitMs(raw.timeoutMs, 'timeoutMs') ?? DEFAULTS.timeoutMs;
  const streamIdleMs = optionalLimitMs(raw.streamIdleMs, 'streamIdleMs') ?? DEFAULTS.streamIdleMs;
  const overrides = parseOverrides(raw.overrides, 'overrides', parseMethodOptions);
  const wheelOption = optionalWheel(raw.wheel, 'wheel');

  const base: MethodPlan = {
    timeout: timeoutMs === Infinity ? NONE : { ms: timeoutMs, from: 'default' },
    streamIdleMs,
  };
  const plans = new Map<string, MethodPlan>();
  const planFor = (path: string): MethodPlan => {
    let plan = plans.get(path);
    if (plan === undefined) {
      const service = overrides.services.get(serviceKeyOf(path));
      const method = overrides.methods.get(path);
      plan = {
        timeout:
          method?.timeoutMs !== undefined
            ? { ms: method.timeoutMs, from: 'method' }
            : service?.timeoutMs !== undefined
              ? { ms: service.timeoutMs, from: 'service' }
              : base.timeout,
        streamIdleMs: method?.streamIdleMs ?? service?.streamIdleMs ?? base.streamIdleMs,
      };
      plans.set(path, plan);
    }
    return plan;
  };

  return (callOptions: InterceptorOptions, nextCall) => {
    const method = callOptions.method_definition;
    const path = method.path;
    const plan = planFor(path);
    const wheel = wheelOption ?? sharedWheel();
    const now = freshNow(wheel.clock); // a call costs far more than a clock read
    let expiresAt = now + plan.timeout.ms;
    let limit = plan.timeout.from;

    const explicit = callOptions.deadline;
    const hasExplicit = explicit !== undefined && explicit !== Infinity;
    const flags = callOptions.propagate_flags ?? Propagate.DEFAULTS;
    const parent = (flags & Propagate.DEADLINE) !== 0 ? callOptions.parent : undefined;
    if (hasExplicit || parent !== undefined) {
      const wallNow = Date.now();
      const explicitAt = hasExplicit ? now + msUntil(explicit, wallNow) : Infinity;
      if (explicitAt < expiresAt) {
        expiresAt = explicitAt;
        limit = 'explicit';
      }
      const parentAt = parent !== undefined ? now + msUntil(parent.getDeadline(), wallNow) : Infinity;
      if (parentAt < expiresAt) {
        expiresAt = parentAt;
        limit = 'propagated';
      }
    }
    const ambient = currentDeadline();
    if (ambient !== undefined) {
      const ambientAt = ambient.wheel.clock === wheel.clock ? ambient.expiresAt : now + ambient.remaining();
      if (ambientAt < expiresAt) {
        expiresAt = ambientAt;
        limit = 'propagated';
      }
      if (ambient.signal.aborted && !isTimeout(ambient.signal.reason))
        return new SpentCall(Status.CANCELLED, PARENT_CANCELLED);
    }
    if (expiresAt <= now) {
      publishDeadline('client', path, limit, 0, 0, captureContext(deadlineChannel));
      return new SpentCall(Status.DEADLINE_EXCEEDED, spentDetails(limit, path));
    }

    const idleMs = method.responseStream ? plan.streamIdleMs : Infinity;
    if (expiresAt === Infinity && idleMs === Infinity) return new InterceptingCall(nextCall(callOptions));
    // grpc-js would arm a setTimeout for an explicit or parent deadline; the wheel times it instead.
    const next =
      hasExplicit || parent !== undefined
        ? nextCall({ ...callOptions, deadline: Infinity, propagate_flags: flags & ~Propagate.DEADLINE })
        : nextCall(callOptions);
    // A configured limit is reported as configured (80, not the 79.99999999999997 of a float difference).
    const budgetMs = expiresAt === now + plan.timeout.ms ? plan.timeout.ms : expiresAt - now;
    const call = new DeadlineCall(next, wheel, path, limit, expiresAt, budgetMs, idleMs, ambient?.signal);
    // grpc-js types an interceptor's result as its InterceptingCall class but only ever uses it
    // through InterceptingCallInterface (the next interceptor wraps it; the client calls it),
    // which DeadlineCall implements without the base class's unused per-call fields.
    return call as unknown as InterceptingCall;
  };
}

function parseMethodOptions(entry: unknown, name: string): MethodDeadlineOptions {
  if (typeof entry === 'number') return { timeoutMs: optionalLimitMs(entry, name) };
  if (entry === undefined) throw new TypeError(`@tickwheel/grpc: ${name} must be a number or an object, got undefined`);
  const raw = optionsObject(entry, name, ['timeoutMs', 'streamIdleMs']);
  return {
    timeoutMs: optionalLimitMs(raw.timeoutMs, `${name}.timeoutMs`),
    streamIdleMs: optionalLimitMs(raw.streamIdleMs, `${name}.streamIdleMs`),
  };
}
