/**
 * serverDeadlineInterceptor: the server entry function that runs each handler inside its call's deadline.
 */
import { Metadata, ServerInterceptingCall, status } from '@grpc/grpc-js';
import type { ServerInterceptingCallInterface, ServerInterceptor, ServerMethodDefinition } from '@grpc/grpc-js';
import { sharedWheel } from '@tickwheel/core';
import { enableAmbientDeadlines } from '@tickwheel/core/internal';
import { msUntil } from './grpc-timeout.js';
import { DEFAULTS, optionalLimitMs, optionalWheel, optionsObject, parseOverrides, serviceKeyOf } from './options.js';
import { ServerDeadlineCall, type ServerMethodPlan } from './server-deadline-call.js';
import type { ServerDeadlineInterceptorOptions, ServerMethodDeadlineOptions } from './types.js';

/**
 * A grpc-js server interceptor (grpc-js >= 1.10) that enforces each call's deadline on a
 * tickwheel `TimingWheel` and hands it to the handler as the ambient `currentDeadline()`.
 *
 * The deadline is the client's (`grpc-timeout` header), or `defaultTimeoutMs` when the client
 * sent none, capped by `maxTimeoutMs`; method overrides win over service overrides, which win
 * over the top-level options. When it passes, the client gets `DEADLINE_EXCEEDED` exactly once,
 * with details naming the limit (`propagated`, `default` or `max`), and the handler's
 * `currentDeadline().signal` aborts with a `TimeoutError`; whatever the handler sends afterwards
 * is dropped. A client cancel aborts the same signal with an `AbortError`.
 *
 * Inside the handler, outgoing calls through {@link deadlineInterceptor} (or any tickwheel
 * adapter) inherit the remaining budget with no extra code. A call with no deadline at all (no
 * header, no default) gets no ambient deadline.
 *
 * @param options - see {@link ServerDeadlineInterceptorOptions}; all optional
 * @throws TypeError/RangeError, naming the option, for a bad timeout, key or wheel
 * @example
 * ```ts
 * const server = new Server({ interceptors: [serverDeadlineInterceptor({ maxTimeoutMs: 10_000, defaultTimeoutMs: 2_000 })] });
 * server.addService(shop.Cart.service, {
 *   get(call, callback) {
 *     fetchCart(call.request, { signal: currentDeadline()?.signal }).then((cart) => callback(null, cart), callback);
 *   },
 * });
 * ```
 */
export function serverDeadlineInterceptor(options?: ServerDeadlineInterceptorOptions): ServerInterceptor {
  const raw = optionsObject(options, 'options', ['defaultTimeoutMs', 'maxTimeoutMs', 'overrides', 'wheel']);
  const defaultTimeoutMs = optionalLimitMs(raw.defaultTimeoutMs, 'defaultTimeoutMs') ?? DEFAULTS.defaultTimeoutMs;
  const maxTimeoutMs = optionalLimitMs(raw.maxTimeoutMs, 'maxTimeoutMs') ?? DEFAULTS.maxTimeoutMs;
  const overrides = parseOverrides(raw.overrides, 'overrides', parseServerMethodOptions);
  const wheelOption = optionalWheel(raw.wheel, 'wheel');

  // Every call enters a deadline: the ambient store is switched on now, while the server is set
  // up, so that the async resources of its calls hold their slot in the object (core's deadline.ts).
  enableAmbientDeadlines();

  const plans = new Map<string, ServerMethodPlan>();
  const planFor = (method: ServerMethodDefinition<unknown, unknown>): ServerMethodPlan => {
    const path = method.path;
    let plan = plans.get(path);
    if (plan === undefined) {
      const service = overrides.services.get(serviceKeyOf(path));
      const own = overrides.methods.get(path);
      plan = {
        path,
        wheel: wheelOption ?? sharedWheel(),
        defaultTimeoutMs: own?.defaultTimeoutMs ?? service?.defaultTimeoutMs ?? defaultTimeoutMs,
        maxTimeoutMs: own?.maxTimeoutMs ?? service?.maxTimeoutMs ?? maxTimeoutMs,
        requestStream: method.requestStream,
      };
      plans.set(path, plan);
    }
    return plan;
  };

  return (methodDefinition, call) => {
    const plan = planFor(methodDefinition);
    // sharedWheel() hands out a new wheel once the old one was closed; a plan must not keep the old.
    if (plan.wheel.isClosed) {
      if (wheelOption !== undefined) return closedWheelCall(call, plan.path);
      plan.wheel = sharedWheel();
    }
    const arrivedAt = Date.now();
    let budgetMs = msUntil(call.getDeadline(), arrivedAt);
    if (budgetMs < WRAPPED_BELOW_MS) {
      // grpc-js read a grpc-timeout past 2^31 - 1 ms as a negative figure and is about to fail
      // the call: the client's budget is unknown, but longer than grpc-js can time.
      budgetMs = Infinity;
      if (!disarmGrpcJsTimer(call)) return new ServerInterceptingCall(call);
    } else if (budgetMs !== Infinity) {
      // The wheel times the call; grpc-js's own timer for the same header would be a second one.
      disarmGrpcJsTimer(call);
    }
    // grpc-js types an interceptor's result as its ServerInterceptingCall class but only ever uses
    // it through ServerInterceptingCallInterface (the next interceptor wraps it; the handler
    // calls it), which ServerDeadlineCall implements without the base class's per-call objects.
    return new ServerDeadlineCall(call, plan, budgetMs, arrivedAt) as unknown as ServerInterceptingCall;
  };
}

/**
 * A `grpc-timeout` value is never negative, and grpc-js works the deadline out from it a few
 * microseconds before the interceptors run: a deadline further in the past than this comes from
 * grpc-js's 32-bit reading of a budget past 2^31 - 1 ms (`(digits * unit) | 0`).
 */
const WRAPPED_BELOW_MS = -1_000;

/**
 * grpc-js's server arms a `setTimeout` for every `grpc-timeout` header before any interceptor
 * runs, and no public API turns it off. When this interceptor is the first in the server's list,
 * the call it receives is grpc-js's own (`BaseServerInterceptingCall`) and that timer is its
 * `deadlineTimer`: clearing it leaves the wheel as the call's only timer (as the client
 * interceptor does with `deadline: Infinity`), and saves a call whose budget grpc-js misread.
 * Anything else (another interceptor first, a grpc-js without the field) is left alone.
 *
 * @returns whether grpc-js's timer was found (and cleared)
 */
function disarmGrpcJsTimer(call: ServerInterceptingCallInterface): boolean {
  const base = call as { deadlineTimer?: unknown };
  const timer = base.deadlineTimer;
  if (timer === null || typeof timer !== 'object' || typeof (timer as NodeJS.Timeout).hasRef !== 'function')
    return false;
  clearTimeout(timer as NodeJS.Timeout);
  // grpc-js only ever clears it (`if (this.deadlineTimer) clearTimeout(...)`); dropping it frees
  // the Timeout and its closure for the rest of the call.
  base.deadlineTimer = null;
  return true;
}

/**
 * A call that arrives after the `wheel` option was closed ends at once with `INTERNAL` and says
 * why: timing it would throw inside grpc-js's event handling (an uncaught exception, and a call
 * that never ends), and serving it untimed would drop its deadline without a word.
 */
function closedWheelCall(call: ServerInterceptingCallInterface, path: string): ServerInterceptingCall {
  return new ServerInterceptingCall(call, {
    start(next) {
      next();
      call.sendStatus({
        code: status.INTERNAL,
        details: `@tickwheel/grpc: the wheel given to serverDeadlineInterceptor was closed; ${path} cannot be timed`,
        metadata: new Metadata(),
      });
    },
  });
}

function parseServerMethodOptions(entry: unknown, name: string): ServerMethodDeadlineOptions {
  if (entry === undefined) throw new TypeError(`@tickwheel/grpc: ${name} must be an object, got undefined`);
  const raw = optionsObject(entry, name, ['defaultTimeoutMs', 'maxTimeoutMs']);
  return {
    defaultTimeoutMs: optionalLimitMs(raw.defaultTimeoutMs, `${name}.defaultTimeoutMs`),
    maxTimeoutMs: optionalLimitMs(raw.maxTimeoutMs, `${name}.maxTimeoutMs`),
  };
}
