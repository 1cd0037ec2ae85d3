/**
 * Core's diagnostics channels: their names, message types and guarded publish helpers.
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
 * for every store, at a far higher cost per request.)
 */
import { typedChannel } from './kit/channel-kit.js';

// The wheel declares and publishes its own two channels (so that it imports nothing that names it).
export {
  CORE_WAKE_CHANNEL,
  CORE_CALLBACK_ERROR_CHANNEL,
  publishWake,
  publishCallbackError,
} from './wheel/timing-wheel.js';
/** @internal */
export { wakeChannel, callbackErrorChannel } from './wheel/timing-wheel.js';
export type { WheelWakeMessage, CallbackErrorMessage } from './wheel/timing-wheel.js';
// TimerSet declares its channel beside the class its message names (so that nothing it imports names it).
export { CORE_TIMER_SET_EXPIRE_CHANNEL, publishTimerSetExpire } from './timer-set/timer-set.js';
/** @internal */
export { timerSetExpireChannel } from './timer-set/timer-set.js';
export type { TimerSetExpireMessage } from './timer-set/timer-set.js';
/** Name of the channel of {@link ContextCarrier}: where adapters ask for the caller's context. */
export const CORE_CAPTURE_CONTEXT_CHANNEL = 'tickwheel:core:capture-context';

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
