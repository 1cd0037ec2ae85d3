import { ServerInterceptingCall } from '@grpc/grpc-js';
import type { ServerInterceptor } from '@grpc/grpc-js';
import { sharedWheel } from '@tickwheel/core';
import { msUntil } from './grpc-timeout.js';
import { optionalLimitMs, optionalWheel, optionsObject, parseOverrides, serviceKeyOf } from './options.js';
import { ServerDeadlineCall } from './server-deadline-call.js';
import type { ServerDeadlineInterceptorOptions, ServerMethodDeadlineOptions } from './types.js';

/** What the options say about one method, worked out on its first call and kept. */
interface ServerMethodPlan {
  readonly defaultTimeoutMs: number;
  readonly maxTimeoutMs: number;
}

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
  const defaultTimeoutMs = optionalLimitMs(raw.defaultTimeoutMs, 'defaultTimeoutMs') ?? Infinity;
  const maxTimeoutMs = optionalLimitMs(raw.maxTimeoutMs, 'maxTimeoutMs') ?? Infinity;
  const overrides = parseOverrides(raw.overrides, 'overrides', parseServerMethodOptions);
  const wheelOption = optionalWheel(raw.wheel, 'wheel');

  const plans = new Map<string, ServerMethodPlan>();
  const planFor = (path: string): ServerMethodPlan => {
    let plan = plans.get(path);
    if (plan === undefined) {
      const service = overrides.services.get(serviceKeyOf(path));
      const method = overrides.methods.get(path);
      plan = {
        defaultTimeoutMs: method?.defaultTimeoutMs ?? service?.defaultTimeoutMs ?? defaultTimeoutMs,
        maxTimeoutMs: method?.maxTimeoutMs ?? service?.maxTimeoutMs ?? maxTimeoutMs,
      };
      plans.set(path, plan);
    }
    return plan;
  };

  return (methodDefinition, call) => {
    const path = methodDefinition.path;
    const plan = planFor(path);
    const wallNow = Date.now();
    let budgetMs = msUntil(call.getDeadline(), wallNow);
    let limit: 'propagated' | 'default' | 'max' = 'propagated';
    if (budgetMs === Infinity) {
      budgetMs = plan.defaultTimeoutMs;
      limit = 'default';
    }
    if (plan.maxTimeoutMs < budgetMs) {
      budgetMs = plan.maxTimeoutMs;
      limit = 'max';
    }
    if (budgetMs === Infinity) return new ServerInterceptingCall(call);
    if (budgetMs < 0) budgetMs = 0;
    const wheel = wheelOption ?? sharedWheel();
    return new ServerDeadlineCall(call, wheel, path, limit, wheel.clock.now() + budgetMs, wallNow + budgetMs, budgetMs);
  };
}

function parseServerMethodOptions(entry: unknown, name: string): ServerMethodDeadlineOptions {
  if (entry === undefined) throw new TypeError(`${name} must be an object, got undefined`);
  const raw = optionsObject(entry, name, ['defaultTimeoutMs', 'maxTimeoutMs']);
  return {
    defaultTimeoutMs: optionalLimitMs(raw.defaultTimeoutMs, `${name}.defaultTimeoutMs`),
    maxTimeoutMs: optionalLimitMs(raw.maxTimeoutMs, `${name}.maxTimeoutMs`),
  };
}
