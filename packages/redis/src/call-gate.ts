/**
 * CallGate: at most {@link MAX_CALLS_IN_FLIGHT} of one RedisTimers' calls in flight on its client;
 * the others wait for their turn, in the order they were made.
 *
 * Every try is abandoned after TRY_TIMEOUT_MS (failover.ts), and a try that reaches Redis after
 * that is refused as late. Without the gate, a caller that starts tens of thousands of schedules at
 * once queues them all on one connection: the tail waits behind the head for longer than a try may
 * take, is abandoned, refused, retried at the back of the queue, and runs out of failover budget
 * while Redis answers all along. Behind the gate a try waits for at most the calls in flight.
 *
 * A waiting call has not tried Redis yet, so waiting does not spend its failover budget while
 * Redis answers: it fails with RedisUnavailableError (no try made) once `budgetMs` has passed
 * since the later of its arrival and the last answer a call through the gate got, and when it
 * gets its turn it runs with what is left of that. So a caller's calls fail together, a budget
 * after Redis stopped answering, not one budget after another. Arrivals, answers and the wait
 * for the oldest waiter's deadline are on the wheel and its clock (the `wheel` option), read
 * fresh (`freshNow`): a call's cost dwarfs a read, and a job's reading may be older than the call.
 */
import { freshNow, type TimerHandle, type TimingWheel } from '@tickwheel/core';

/** Calls in flight per RedisTimers: enough to keep a pipeline to every shard full. */
export const MAX_CALLS_IN_FLIGHT = 256;

interface Waiter {
  arrived: number;
  budgetMs: number;
  start: (budgetMs: number) => void;
  fail: () => void;
}

export class CallGate {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private head = 0;
  private lastAnswer = Number.NEGATIVE_INFINITY;
  private timer: TimerHandle | undefined;

  /**
   * @param wheel - where waiters' deadlines are timed, on its clock
   * @param limit - calls in flight at most
   */
  constructor(
    private readonly wheel: TimingWheel,
    private readonly limit = MAX_CALLS_IN_FLIGHT,
  ) {}

  /** Calls waiting for their turn. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /**
   * Runs `call` with the failover budget it has left once a slot is free. `budgetMs` 0 (one try,
   * never abandoned) runs at once, past the gate.
   *
   * @param answered - whether an error still means that Redis answered (the call's own error)
   * @param unavailable - the error for a call whose budget ran out while it waited
   */
  run<T>(
    call: (budgetMs: number) => Promise<T>,
    budgetMs: number,
    answered: (error: unknown) => boolean,
    unavailable: () => Error,
  ): Promise<T> {
    if (budgetMs <= 0) return call(budgetMs);
    const settle = (promise: Promise<T>): Promise<T> =>
      promise.then(
        (value) => {
          this.release(true);
          return value;
        },
        (error: unknown) => {
          this.release(answered(error));
          throw error;
        },
      );
    if (this.running < this.limit && this.queued === 0) {
      this.running++;
      return settle(call(budgetMs));
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        arrived: freshNow(this.wheel.clock),
        budgetMs,
        start: (left) => {
          settle(call(left)).then(resolve, reject);
        },
        fail: () => reject(unavailable()),
      });
      this.arm();
    });
  }

  private deadline(waiter: Waiter): number {
    return Math.max(waiter.arrived, this.lastAnswer) + waiter.budgetMs;
  }

  private release(answered: boolean): void {
    this.running--;
    if (answered) this.lastAnswer = freshNow(this.wheel.clock);
    while (this.running < this.limit && this.queued > 0) {
      const waiter = this.shift();
      const left = this.deadline(waiter) - freshNow(this.wheel.clock);
      if (left < 1) {
        waiter.fail();
        continue;
      }
      this.running++;
      waiter.start(left);
    }
    if (this.queued === 0 && this.timer !== undefined) {
      this.timer.cancel();
      this.timer = undefined;
    }
  }

  private shift(): Waiter {
    const waiter = this.waiting[this.head++];
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    return waiter;
  }

  /** One timer for the oldest waiter: later arrivals have later deadlines. */
  private arm(): void {
    if (this.timer !== undefined || this.queued === 0) return;
    this.timer = this.wheel.scheduleAt(this.deadline(this.waiting[this.head]), () => {
      this.timer = undefined;
      const now = this.wheel.clock.now();
      while (this.queued > 0 && this.deadline(this.waiting[this.head]) <= now) this.shift().fail();
      this.arm();
    });
  }
}
