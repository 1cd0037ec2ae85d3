/**
 * Instrumentation: what one instrumentTickwheel() call holds (its channel subscriptions and gauge callback) and its disable().
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
import diagnosticsChannel from 'node:diagnostics_channel';
import { diag, type ObservableResult } from '@opentelemetry/api';
import type { Instruments } from './instruments.js';
import type { ResolvedOptions } from './options.js';
import { createRecorders, type Recorder } from './recorders.js';
import type { TickwheelInstrumentation } from './types.js';

/** The name diag messages start with. */
const PACKAGE_NAME = '@tickwheel/otel';

type Listener = (message: unknown, name: string | symbol) => void;

/**
 * The state of one instrumentation: it subscribes a guarded recorder to each channel and observes
 * the pending timers of the configured wheels, until {@link Instrumentation.disable}. `disable`
 * and `[Symbol.dispose]` are bound, so either may be handed around on its own.
 */
export class Instrumentation implements TickwheelInstrumentation {
  #enabled = true;
  readonly #subscriptions: Array<[channel: string, listener: Listener]> = [];
  readonly #instruments: Instruments;
  readonly #observePending: (result: ObservableResult) => void;

  constructor(instruments: Instruments, options: Pick<ResolvedOptions, 'spanEvents' | 'wheels'>) {
    this.#instruments = instruments;
    for (const [channel, recorder] of createRecorders(instruments, options.spanEvents)) {
      const listener = guarded(recorder);
      diagnosticsChannel.subscribe(channel, listener);
      this.#subscriptions.push([channel, listener]);
    }
    this.#observePending = (result) => {
      for (const [name, wheel] of options.wheels) {
        try {
          result.observe(wheel().size, { 'tickwheel.wheel': name });
        } catch (error) {
          diag.error(`${PACKAGE_NAME}: could not read the pending timers of wheel ${JSON.stringify(name)}`, error);
        }
      }
    };
    instruments.wheelPending.addCallback(this.#observePending);
  }

  /** True until {@link Instrumentation.disable} is called. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** Unsubscribes from every channel and removes the gauge's callback; again, it does nothing. */
  readonly disable = (): void => {
    if (!this.#enabled) return;
    this.#enabled = false;
    for (const [channel, listener] of this.#subscriptions) diagnosticsChannel.unsubscribe(channel, listener);
    this.#instruments.wheelPending.removeCallback(this.#observePending);
  };

  /** Same as `disable()`, for `using instrumentation = instrumentTickwheel()`. */
  readonly [Symbol.dispose] = this.disable;
}

/** A recorder that reports its errors to `diag` instead of throwing them into the publisher. */
function guarded(recorder: Recorder): Listener {
  return (message, name) => {
    try {
      (recorder as (message: unknown) => void)(message);
    } catch (error) {
      diag.error(`${PACKAGE_NAME}: recording a message of ${String(name)} failed`, error);
    }
  };
}
