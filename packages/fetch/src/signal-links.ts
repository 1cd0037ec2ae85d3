/**
 * One abort listener per caller or deadline signal, shared by every request that follows it.
 */
import { defaultMaxListeners, getMaxListeners, setMaxListeners } from 'node:events';

/**
 * One abort listener per signal, shared by every request that follows it.
 *
 * A caller's signal or an ambient deadline's signal is often shared by many concurrent
 * requests (a fan-out inside one `withDeadline`, a page-wide "cancel" signal). A listener per
 * request would pass Node's limit of 10 and print `MaxListenersExceededWarning`, where bare
 * fetch is quiet. Here the first request to follow a signal adds one listener; later ones join a
 * set; the last to leave removes the listener, so a signal that outlives its requests holds
 * nothing of theirs. Joining and leaving are a Set add and delete, cheaper than adding and
 * removing an event listener.
 */

/** A request following a signal: told once when the signal aborts. */
export interface SignalFollower {
  signalAborted(signal: AbortSignal): void;
}

interface Link {
  readonly followers: Set<SignalFollower>;
  readonly listener: () => void;
  /** The listener is on the signal: from the first follower's arrival to the last one's leaving. */
  attached: boolean;
}

/**
 * Links outlive their followers (not their signal): a signal followed by one request after
 * another (the common sequential case) re-attaches its listener instead of allocating a link
 * and a WeakMap entry per request (measured: benchmarks/README.md, "fetch: measurements behind the source comments").
 */
const links = new WeakMap<AbortSignal, Link>();
const ONCE = { once: true } as const;

/**
 * Makes `follower` hear about `signal`'s abort until {@link unfollow}. `signal` must not be
 * aborted yet. `asFetch`: raise the signal's listener limit as fetch does with a signal it is given.
 */
export function follow(signal: AbortSignal, follower: SignalFollower, asFetch: boolean): void {
  let link = links.get(signal);
  if (link === undefined) {
    const followers = new Set<SignalFollower>();
    const created: Link = {
      followers,
      listener: (): void => {
        created.attached = false;
        links.delete(signal);
        for (const each of followers) each.signalAborted(signal);
        followers.clear();
      },
      attached: false,
    };
    link = created;
    links.set(signal, link);
  }
  if (!link.attached) {
    link.attached = true;
    signal.addEventListener('abort', link.listener, ONCE);
  }
  if (asFetch) raiseListenerLimit(signal);
  link.followers.add(follower);
}

/** Stops `follower` hearing about `signal`; the last follower to leave removes the listener. */
export function unfollow(signal: AbortSignal, follower: SignalFollower): void {
  const link = links.get(signal);
  if (link === undefined || !link.followers.delete(follower) || link.followers.size > 0) return;
  link.attached = false;
  signal.removeEventListener('abort', link.listener);
}

/**
 * Bare fetch raises the listener limit of a signal it is given from the default to 1500
 * (undici's Request constructor), so that its own listeners do not warn; callers can observe
 * it with `events.getMaxListeners(signal)`. The wrapper gives fetch its own signal, so it does
 * the same to the caller's.
 */
function raiseListenerLimit(signal: AbortSignal): void {
  try {
    if (getMaxListeners(signal) === defaultMaxListeners) setMaxListeners(1500, signal);
  } catch {
    // Signals of other realms or libraries may not support it; fetch ignores that too.
  }
}
