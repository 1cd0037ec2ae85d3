import type { BodyObserver } from '../../src/timed-body.js';

/** A body observer that records the order of what it was told: pull, chunk, done, error. */
export class RecordingObserver implements BodyObserver {
  readonly events: string[] = [];
  pullStarted(): void {
    this.events.push('pull');
  }
  chunkArrived(): void {
    this.events.push('chunk');
  }
  bodyDone(): void {
    this.events.push('done');
  }
  bodyError(error: unknown): unknown {
    this.events.push('error');
    return error;
  }
}
