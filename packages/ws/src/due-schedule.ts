/**
 * DueSchedule: entries filed by the time they fall due, one wheel handle per due time shared by all of them.
 *
 * A heartbeat's connections fall due in crowds: pings are rounded up to the `pingSlackMs` grid,
 * and the pings of one pass all get their pong deadline within a millisecond or two. So instead
 * of one wheel handle (and one closure) per connection, each due time has a {@link DueGroup}: a
 * ring of entries, doubly linked through the entries themselves, and one handle on the wheel.
 * Filing an entry is a map lookup (usually not even that: the group last filed into is kept)
 * and two pointer writes; unfiling is O(1) and cancels the group's handle when it empties, so
 * no timer outlives the entries it was for. When the handle fires, the group leaves the map and
 * its entries are handed to the runner one by one, each unlinked first, so the runner may file
 * it again (or unfile any other entry) as it likes.
 *
 * Entries whose due time is not known yet (the pings of a pass, until the pass ends and reads
 * the clock) wait in a held ring ({@link DueSchedule.hold}), a sentinel that is not on the wheel;
 * {@link DueSchedule.fileAll} then moves the whole ring into its group with four pointer writes,
 * however many entries it holds.
 *
 * It is a second scheduler on top of the core wheel, kept because re-filing a record into a
 * shared due time here costs fewer instructions than refreshing one wheel handle per connection
 * (counted with cachegrind by benchmarks/lib/ws-schedule-kernel.mjs; figures in benchmarks/README.md).
 *
 * The rings are also how a caller finds every entry it has (a controller's `stop()`), with no
 * collection of its own per entry: {@link DueSchedule.entries} walks the groups (the one firing
 * included) and whichever held rings the caller names.
 */
import type { TimerHandle, TimingWheel } from '@tickwheel/core';

/** What a group's ring holds: the entries, and the group itself as the ring's sentinel. */
export type DueLink = DueEntry | DueGroup;

/** Anything a {@link DueSchedule} files: two link fields, undefined while unfiled. */
export interface DueEntry {
  prev: DueLink | undefined;
  next: DueLink | undefined;
}

/** The entries due at one time, and the wheel handle that runs them. */
export class DueGroup {
  prev: DueLink = this;
  next: DueLink = this;
  handle: TimerHandle | undefined = undefined;
  /** In the schedule's map: false once it fired or was cancelled (nothing is filed into it then). */
  open = true;

  constructor(readonly dueAt: number) {}
}

/** An empty ring for {@link DueSchedule.hold}: a sentinel with no due time, never on the wheel. */
export function heldRing(): DueGroup {
  const ring = new DueGroup(NaN);
  ring.open = false;
  return ring;
}

/**
 * What runs the entries of a group that came due: an object with methods (the liveness check),
 * not two closures, so that the optimized pass calls them directly, with their own type feedback.
 */
export interface DueRunner<E extends DueEntry> {
  /** Called with each entry of a group that came due, after unlinking it, and the clock reading of the pass (one per group). */
  run(entry: E, now: number): void;
  /** Called once the group's entries ran (also when `run` threw). */
  endPass?(): void;
}

/** See the module comment. */
export class DueSchedule<E extends DueEntry> {
  private readonly groups = new Map<number, DueGroup>();
  /** The group filed into last: consecutive filings mostly share a due time. */
  private last: DueGroup | undefined = undefined;
  /** The group whose entries are running: out of the map, its entries not run yet still in its ring. */
  private firing: DueGroup | undefined = undefined;

  /**
   * @param wheel - where the groups' handles live (unref'ed: a schedule never keeps the process alive)
   * @param runner - runs the entries that came due (see {@link DueRunner})
   */
  constructor(
    private readonly wheel: TimingWheel,
    private readonly runner: DueRunner<E>,
  ) {}

  /** Handles on the wheel (one per due time with entries). */
  get groupCount(): number {
    return this.groups.size;
  }

  /**
   * Files `entry` (unfiling it first if filed) to run at `dueAt`, a time on the wheel's clock,
   * rounded up to the whole ms (never early), so that times within one ms share a group.
   * Infinity (nothing ever due) leaves it unfiled.
   */
  file(entry: E, dueAt: number): void {
    if (entry.prev !== undefined) this.unfile(entry);
    if (dueAt === Infinity) return;
    link(entry, this.groupAt(Math.ceil(dueAt)));
  }

  /** Unfiles `entry` if filed and keeps it in `ring` (see {@link heldRing}) until {@link DueSchedule.fileAll}. */
  hold(entry: E, ring: DueGroup): void {
    if (entry.prev !== undefined) this.unfile(entry);
    link(entry, ring);
  }

  /** Files every entry held in `ring` at `dueAt` (as {@link DueSchedule.file} would, in O(1)) and empties it. */
  fileAll(ring: DueGroup, dueAt: number): void {
    const first = ring.next;
    if (first === ring) return;
    const last = ring.prev;
    ring.next = ring;
    ring.prev = ring;
    if (dueAt === Infinity) {
      for (let e: DueLink = first; ;) {
        const entry = e as E;
        e = entry.next!;
        entry.prev = undefined;
        entry.next = undefined;
        if (entry === last) return;
      }
    }
    const group = this.groupAt(Math.ceil(dueAt));
    const tail = group.prev;
    tail.next = first;
    first.prev = tail;
    last.next = group;
    group.prev = last;
  }

  /** Unfiles `entry` in O(1); cancels its group's handle when it was the last entry. No-op when not filed. */
  unfile(entry: E): void {
    const prev = entry.prev;
    const next = entry.next;
    if (prev === undefined || next === undefined) return;
    prev.next = next;
    next.prev = prev;
    entry.prev = undefined;
    entry.next = undefined;
    // Neighbours that are one and the same node: the sentinel, alone in its ring.
    if (prev === next && prev instanceof DueGroup && prev.open) this.close(prev, true);
  }

  /**
   * Every entry filed (the group running now included, for the entries it has not run yet), then
   * every entry held in `held`, in a new array: O(entries), for a caller that must visit them all.
   */
  entries(...held: DueGroup[]): E[] {
    const out: E[] = [];
    for (const group of this.groups.values()) collect(group, out);
    if (this.firing !== undefined) collect(this.firing, out);
    for (const ring of held) collect(ring, out);
    return out;
  }

  /** Cancels every handle and forgets every entry (those of the group running now too). */
  clear(): void {
    for (const group of this.groups.values()) {
      group.open = false;
      group.handle?.cancel();
      empty(group);
    }
    if (this.firing !== undefined) empty(this.firing);
    this.groups.clear();
    this.last = undefined;
  }

  /** The open group of `dueAt` (whole ms), opened if there is none. */
  private groupAt(dueAt: number): DueGroup {
    let group = this.last;
    if (group === undefined || group.dueAt !== dueAt || !group.open) {
      group = this.groups.get(dueAt);
      if (group === undefined) group = this.open(dueAt);
      this.last = group;
    }
    return group;
  }

  private open(dueAt: number): DueGroup {
    const group = new DueGroup(dueAt);
    group.handle = this.wheel.scheduleAt(dueAt, () => this.fire(group)).unref();
    this.groups.set(dueAt, group);
    return group;
  }

  private close(group: DueGroup, cancel: boolean): void {
    group.open = false;
    if (cancel) group.handle?.cancel();
    this.groups.delete(group.dueAt);
    if (this.last === group) this.last = undefined;
  }

  private fire(group: DueGroup): void {
    this.close(group, false);
    const now = this.wheel.clock.now();
    // A throwing runner (a user's 'dead' or 'idle' listener) must not cost the entries after it
    // their turn, nor the wheel a round per entry: every entry runs, the errors are thrown after.
    let errors: unknown[] | undefined;
    const outer = this.firing;
    const runner = this.runner;
    this.firing = group;
    try {
      for (let e = group.next; e !== group; e = group.next) {
        const entry = e as E;
        this.unlink(entry);
        try {
          runner.run(entry, now);
        } catch (error) {
          (errors ??= []).push(error);
        }
      }
    } finally {
      this.firing = outer;
    }
    runner.endPass?.();
    if (errors !== undefined) {
      throw errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} heartbeat listeners threw`);
    }
  }

  /** Unlinks from a group that is no longer open (the one firing). */
  private unlink(entry: E): void {
    entry.prev!.next = entry.next!;
    entry.next!.prev = entry.prev!;
    entry.prev = undefined;
    entry.next = undefined;
  }
}

/** Appends the entries in `sentinel`'s ring to `out`. */
function collect<E>(sentinel: DueGroup, out: E[]): void {
  for (let e = sentinel.next; e !== sentinel; e = e.next!) out.push(e as E);
}

/** Unfiles every entry in `sentinel`'s ring and leaves it empty. */
function empty(sentinel: DueGroup): void {
  for (let e = sentinel.next; e !== sentinel;) {
    const entry = e;
    e = entry.next!;
    entry.prev = undefined;
    entry.next = undefined;
  }
  sentinel.next = sentinel;
  sentinel.prev = sentinel;
}

/** Links `entry` (unfiled) at the tail of the ring of `sentinel`. */
function link(entry: DueEntry, sentinel: DueGroup): void {
  const tail = sentinel.prev;
  entry.prev = tail;
  entry.next = sentinel;
  tail.next = entry;
  sentinel.prev = entry;
}
