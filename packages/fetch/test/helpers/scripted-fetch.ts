import { setImmediate as nextTurn } from 'node:timers/promises';

/** One call the scripted fetch received, which the test answers by hand. */
export interface ScriptedCall {
  readonly input: unknown;
  readonly init: Record<string, unknown> | undefined;
  readonly signal: AbortSignal;
  /** Resolves the call with a response whose body the test feeds with `push`/`end`. */
  respond(status?: number): void;
  /** Resolves the call with a body-less response (as for HEAD or 204). */
  respondEmpty(status?: number): void;
  fail(error: unknown): void;
  push(text: string): void;
  end(): void;
}

/**
 * A fetch-shaped function driven by the test, for deterministic unit tests on a ManualClock.
 * Like real fetch it honours `init.signal`: aborting rejects the pending call with the signal's
 * reason and errors a body being streamed with it.
 */
export class ScriptedFetch {
  readonly calls: ScriptedCall[] = [];

  readonly fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const signal = init?.signal ?? new AbortController().signal;
    return new Promise<Response>((resolve, reject) => {
      let body: ReadableStreamDefaultController<Uint8Array> | undefined;
      const encoder = new TextEncoder();
      const call: ScriptedCall = {
        input,
        init: init as Record<string, unknown> | undefined,
        signal,
        respond: (status = 200) => {
          const stream = new ReadableStream<Uint8Array>({ start: (c) => void (body = c) });
          resolve(new Response(stream, { status, headers: { 'content-type': 'text/plain' } }));
        },
        respondEmpty: (status = 204) => resolve(new Response(null, { status })),
        // Like fetch, reject with whatever the test (or the signal's reason) gives.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        fail: (error) => reject(error),
        push: (text) => body!.enqueue(encoder.encode(text)),
        end: () => body!.close(),
      };
      this.calls.push(call);
      if (signal.aborted) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- fetch rejects with the signal's reason, whatever it is
        reject(signal.reason);
        return;
      }
      signal.addEventListener(
        'abort',
        () => {
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as above
          reject(signal.reason);
          try {
            body?.error(signal.reason);
          } catch {
            // already closed or errored
          }
        },
        { once: true },
      );
    });
  };

  get last(): ScriptedCall {
    return this.calls[this.calls.length - 1];
  }
}

/** Lets pending promise reactions and stream pulls run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await nextTurn();
}

/** Resolves to the rejection reason of `promise`, or fails when it fulfils. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** Records whether `promise` has settled yet, without awaiting it. */
export function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}
