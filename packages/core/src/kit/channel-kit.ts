/**
 * The channel kit: how every tickwheel package declares a diagnostics channel and publishes on it only when someone listens (internal).
 *
 * Each package's `channels.ts` names its channels and message types; what they all did alike,
 * "look the channel up, then `if (!channel.hasSubscribers) return;` before building a message",
 * is here once. {@link guardedPublisher} wraps a message builder so that the publishing site
 * calls a plain function and pays one `hasSubscribers` read when nobody listens: the builder
 * runs, and its message is allocated, only behind that read. The publisher takes its arguments
 * as fixed parameters, not a rest array, so that with no subscriber a call allocates nothing
 * (benchmarks/lib/channel-overhead.mjs counts it).
 */
import diagnosticsChannel from 'node:diagnostics_channel';

/**
 * A channel whose messages have type `T`: `diagnostics_channel.channel(name)` with its publish
 * narrowed, so that a publishing site cannot send the wrong shape.
 */
export interface TypedChannel<T> {
  readonly name: string | symbol;
  /** False until someone subscribes: read it before building a message. */
  readonly hasSubscribers: boolean;
  publish(message: T): void;
}

/** The channel named `name` (the same object for every caller in the process), typed by its message. */
export function typedChannel<T>(name: string): TypedChannel<T> {
  return diagnosticsChannel.channel(name);
}

/** At most this many arguments reach a builder (the publisher has fixed parameters; see the file). */
type Arguments = [unknown?, unknown?, unknown?, unknown?, unknown?, unknown?];

/**
 * A function that publishes `build(...args)` on `channel` when it has subscribers and does
 * nothing else otherwise.
 *
 * @throws RangeError when `build` declares more than six parameters
 */
export function guardedPublisher<A extends unknown[], T>(
  channel: TypedChannel<T>,
  build: (...args: A) => T,
): (...args: A) => void {
  if (build.length > 6) {
    throw new RangeError(`guardedPublisher: a message builder takes at most 6 arguments, got ${build.length}`);
  }
  const buildFixed = build as unknown as (...args: Arguments) => T;
  const publish = (a?: unknown, b?: unknown, c?: unknown, d?: unknown, e?: unknown, f?: unknown): void => {
    if (channel.hasSubscribers) channel.publish(buildFixed(a, b, c, d, e, f));
  };
  return publish as unknown as (...args: A) => void;
}
