/**
 * runPass: the one pass loop of every hierarchical wheel in core, with its runaway guard.
 *
 * Both wheels (the core `TimingWheel`, and a `TimerSet`'s slab wheel, `timer-set/set-wheel.ts`)
 * walk from event to event up to the target tick the same way: find the next occupied bucket
 * (the occupancy search of `wheel-levels.ts`), move the current tick to its start, cascade a
 * coarse bucket one level down or fire a level-0 one, and stop timers that keep re-arming for
 * the tick being fired. What differs is only the storage, as in tokio-util's `time/wheel`
 * (`stack.rs` makes the entries' storage a parameter of one wheel): linked `TimerHandle`s in
 * `Bucket` rings for the core wheel, slab indices in typed arrays for a set. So the loop takes
 * the storage as a parameter ({@link PassLevels}, whose bucket type `B` is the storage's own) and
 * asks the wheel that owns it what to do with each bucket ({@link PassActions}).
 */

/** What a pass asks of a wheel's storage (`wheel-levels.ts`, or a set's slab wheel); `B` names a bucket there. */
export interface PassLevels<B> {
  /** Every tick before this one has been processed; the pass moves it. */
  currentTick: number;
  /** The bucket of the next event at or after `currentTick` (a level-0 bucket to fire or a coarser one to cascade), or undefined. */
  nextEventBucket(): B | undefined;
  /** The tick `bucket`'s slot begins at, in the current window of its level. */
  startOf(bucket: B): number;
  /** True for a level-0 bucket, whose entries fire; false for a coarser one, whose entries cascade. */
  isFine(bucket: B): boolean;
}

/** What a pass asks of the wheel that owns the storage: what to do with a bucket that came up. */
export interface PassActions<B> {
  /** True when the pass must end now (a callback closed the wheel). */
  _halted(): boolean;
  /** Re-files the entries of a coarse bucket that came up, one level down. */
  _cascadeBucket(bucket: B): void;
  /** Fires the entries of a level-0 bucket due at `tick`, re-filing those a lazy refresh pushed later. */
  _fireBucket(bucket: B, tick: number): void;
  /** Cancels the entries of a level-0 bucket that kept re-arming for `tick`, and reports one `TimerLoopError`. */
  _stopLoop(bucket: B, tick: number): void;
}

/**
 * Processes every event of `levels` up to `targetTick`, then leaves the current tick there.
 * Timers that keep re-arming for the tick being fired (a `refresh(0)` loop, a key set again with
 * 0 ms from its own expiry) would never let time move: once `loopLimit` rounds in one pass have
 * fired the same tick, the next round is cancelled instead (`_stopLoop`): the one runaway policy.
 */
export function runPass<B>(levels: PassLevels<B>, wheel: PassActions<B>, targetTick: number, loopLimit: number): void {
  let lastFiredTick = -Infinity;
  let rounds = 0;
  for (;;) {
    const bucket = levels.nextEventBucket();
    if (bucket === undefined) break;
    const eventTick = levels.startOf(bucket);
    if (eventTick > targetTick || wheel._halted()) break;
    levels.currentTick = eventTick;
    if (!levels.isFine(bucket)) {
      wheel._cascadeBucket(bucket);
      continue;
    }
    rounds = eventTick === lastFiredTick ? rounds + 1 : 0;
    lastFiredTick = eventTick;
    if (rounds >= loopLimit) wheel._stopLoop(bucket, eventTick);
    else wheel._fireBucket(bucket, eventTick);
  }
  if (targetTick > levels.currentTick) levels.currentTick = targetTick;
}
