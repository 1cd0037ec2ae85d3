/**
 * Core's diagnostics channels: their names, message types and guarded publish helpers.
 * Must not depend on: a subscriber (@tickwheel/otel) or any adapter package; it only publishes.
 *
 * # Diagnostics channels
 *
 * Core publishes what operators ask about, "how late do our timers fire", "did a callback
 * throw", "which buffs expired", on named `node:diagnostics_channel` channels, the way undici
 * publishes its request lifecycle. Anyone may subscribe by name (`@tickwheel/otel` turns them
 * into OpenTelemetry metrics); nothing here depends on a subscriber being there.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:core:wake` | {@link WheelWakeMessage} | the wheel's driver woke it and its due callbacks ran |
 * | `tickwheel:core:callback-error` | {@link CallbackErrorMessage} | a timer callback threw |
 * | `tickwheel:core:timer-set-expire` | {@link TimerSetExpireMessage} | a `TimerSet` stack expired, before its `onExpire` |
 * | `tickwheel:core:capture-context` | {@link ContextCarrier} | an adapter starts a timed request while its timeout channel has subscribers (see Context) |
 *
 * ## Free when unused
 * Every publish is guarded by `channel.hasSubscribers`, a getter that is `false` until someone
 * subscribes, and the message is built only behind it: a channel nobody listens to costs one
 * property read at the publishing site, and timings that exist only for a message (the callback
 * run time) are not measured either. A subscriber added later sees the events from then on.
 *
 * ## Context
 * Messages are published synchronously, inside the wheel's pass, so a subscriber must be quick
 * and must not throw (diagnostics_channel reports a subscriber's error as an uncaught exception
 * on the next tick; the wheel's pass is not disturbed). A timeout fires in the wheel's callback,
 * whose async context is whatever armed the wheel's native timer, not the request's. So when a
 * request starts, an adapter whose timeout channel has subscribers asks for the caller's context
 * on `tickwheel:core:capture-context` ({@link captureContext}): a subscriber there (the
 * OpenTelemetry bridge) stores what it needs in the carrier, `context.active()`, and the adapter
 * hands it back in the timeout's message as `context`. That costs one publish per request, and
 * only while both channels have subscribers. (`AsyncLocalStorage.snapshot()` would do the same
 * for every store but costs ~10 µs per request on Node 20.)
 */
import { guardedPublisher, typedChannel } from './kit/channel-kit.js';
import type { TimerHandle } from './wheel/timer-handle.js';
import type { TimingWheel } from './wheel/timing-wheel.js';
import type { TimerSet } from './timer-set.js';

/** Name of the channel of {@link WheelWakeMessage}. */
export const CORE_WAKE_CHANNEL = 'tickwheel:core:wake';
/** Name of the channel of {@link CallbackErrorMessage}. */
export const CORE_CALLBACK_ERROR_CHANNEL = 'tickwheel:core:callback-error';
/** Name of the channel of {@link TimerSetExpireMessage}. */
export const CORE_TIMER_SET_EXPIRE_CHANNEL = 'tickwheel:core:timer-set-expire';
/** Name of the channel of {@link ContextCarrier}: where adapters ask for the caller's context. */
export const CORE_CAPTURE_CONTEXT_CHANNEL = 'tickwheel:core:capture-context';

/** Published on `tickwheel:core:wake` after a wake-up's callbacks ran. */
export interface WheelWakeMessage {
  /** The wheel that woke. */
  readonly wheel: TimingWheel;
  /** How long after the time it was armed for the driver woke the wheel, in ms (>= 0). */
  readonly lateMs: number;
  /** Callbacks run in this wake-up. */
  readonly fired: number;
  /** How long those callbacks ran in all, in ms (0 when none ran). */
  readonly callbackMs: number;
  /** Timers still pending after the wake-up. */
  readonly pending: number;
}

/** Published on `tickwheel:core:callback-error` when a timer callback throws, before `onError` sees it. */
export interface CallbackErrorMessage {
  readonly wheel: TimingWheel;
  /** What the callback threw. */
  readonly error: unknown;
  /** The handle whose callback threw. */
  readonly handle: TimerHandle;
}

/** Published on `tickwheel:core:timer-set-expire` when a stack of a `TimerSet` key expires, before its `onExpire` runs. */
export interface TimerSetExpireMessage {
  readonly timerSet: TimerSet<unknown, unknown>;
  /** The key whose stack expired. */
  readonly key: unknown;
  /** Stacks the key still holds; 0 means the key is gone. */
  readonly stacksLeft: number;
}

/**
 * Published on `tickwheel:core:capture-context` when a request starts and its timeout channel has
 * subscribers: a subscriber sets `context` to whatever identifies the caller's context for it
 * (the OpenTelemetry bridge: `context.active()`), and gets it back in the timeout's message.
 */
export interface ContextCarrier {
  context: unknown;
}

export type { TypedChannel } from './kit/channel-kit.js';

/** @internal */
export const wakeChannel = typedChannel<WheelWakeMessage>(CORE_WAKE_CHANNEL);
/** @internal */
export const callbackErrorChannel = typedChannel<CallbackErrorMessage>(CORE_CALLBACK_ERROR_CHANNEL);
/** @internal */
export const timerSetExpireChannel = typedChannel<TimerSetExpireMessage>(CORE_TIMER_SET_EXPIRE_CHANNEL);
/** @internal */
export const captureContextChannel = typedChannel<ContextCarrier>(CORE_CAPTURE_CONTEXT_CHANNEL);

/**
 * The caller's context as the subscribers of `tickwheel:core:capture-context` see it, when
 * `channel` (a timeout channel) has subscribers; undefined otherwise. Adapters call it when a
 * request starts and put the result in the request's timeout message as `context`. With no
 * subscriber it costs one property read.
 */
export function captureContext(channel: { readonly hasSubscribers: boolean }): unknown {
  if (!channel.hasSubscribers || !captureContextChannel.hasSubscribers) return undefined;
  const carrier: ContextCarrier = { context: undefined };
  captureContextChannel.publish(carrier);
  return carrier.context;
}

/**
 * Publishes on `tickwheel:core:wake` when someone listens (the wheel reads `wakeChannel.hasSubscribers`
 * first anyway: timing the pass is part of the message).
 */
export const publishWake = guardedPublisher(
  wakeChannel,
  (wheel: TimingWheel, lateMs: number, fired: number, callbackMs: number): WheelWakeMessage => ({
    wheel,
    lateMs: lateMs > 0 ? lateMs : 0,
    fired,
    callbackMs,
    pending: wheel.size,
  }),
);

/** Publishes on `tickwheel:core:callback-error` when someone listens. */
export const publishCallbackError = guardedPublisher(
  callbackErrorChannel,
  (wheel: TimingWheel, error: unknown, handle: TimerHandle): CallbackErrorMessage => ({ wheel, error, handle }),
);

/** Publishes on `tickwheel:core:timer-set-expire` when someone listens. */
export const publishTimerSetExpire = guardedPublisher(
  timerSetExpireChannel,
  (timerSet: TimerSet<unknown, unknown>, key: unknown, stacksLeft: number): TimerSetExpireMessage => ({
    timerSet,
    key,
    stacksLeft,
  }),
);
