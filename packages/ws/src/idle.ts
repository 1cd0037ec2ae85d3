/**
 * Netty-style idle detection: which of reader, writer and all idleness a connection's check finds due.
 */
import type { WriteAndIdle } from './write-marks.js';
import type { ResolvedOptions } from './options.js';
import type { IdleKind } from './types.js';

/** One idle kind that came due in a check, kept until its event is emitted. */
export interface DueIdle {
  kind: IdleKind;
  /** Since the last activity of that kind. */
  idleMs: number;
  /** The first event of this idle stretch (no event of this kind since the activity). */
  first: boolean;
}

/**
 * The idle kinds due at `now`, each marked as reported at `now` (so it repeats every
 * `<kind>IdleMs` while the idleness lasts), or undefined when none is.
 *
 * @param marks - the connection's last write and last idle events
 * @param lastReadAt - the connection's last read
 */
export function dueIdle(
  marks: WriteAndIdle,
  lastReadAt: number,
  now: number,
  o: ResolvedOptions,
): DueIdle[] | undefined {
  let due: DueIdle[] | undefined;
  if (o.readerIdleMs < Infinity && now >= Math.max(lastReadAt, marks.reader) + o.readerIdleMs) {
    (due ??= []).push({ kind: 'reader', idleMs: now - lastReadAt, first: marks.reader <= lastReadAt });
    marks.reader = now;
  }
  const lastWriteAt = marks.lastWriteAt;
  if (o.writerIdleMs < Infinity && now >= Math.max(lastWriteAt, marks.writer) + o.writerIdleMs) {
    (due ??= []).push({ kind: 'writer', idleMs: now - lastWriteAt, first: marks.writer <= lastWriteAt });
    marks.writer = now;
  }
  const lastActivity = Math.max(lastReadAt, lastWriteAt);
  if (o.allIdleMs < Infinity && now >= Math.max(lastActivity, marks.all) + o.allIdleMs) {
    (due ??= []).push({ kind: 'all', idleMs: now - lastActivity, first: marks.all <= lastActivity });
    marks.all = now;
  }
  return due;
}
