import { TimingWheel } from '@tickwheel/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimeoutOptions } from '../../src/types.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_IMPLEMENTATIONS, type AgentLike } from '../helpers/fetch-implementations.js';
import { TransparencyServer } from './server.js';

/** fetch as the scenarios call it. */
export type AnyFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** What a scenario gets: the fetch under test, the server, and the implementation's classes. */
export interface Context {
  readonly fetch: AnyFetch;
  readonly server: TransparencyServer;
  readonly base: string;
  readonly Request: typeof Request;
  readonly Response: typeof Response;
  /** True for the wrapped fetch (only for scenarios that document a deviation). */
  readonly wrapped: boolean;
  /** The fetch under test with scenario-specific options: `withTimeouts(fetch, options)` when wrapped, bare fetch otherwise. */
  readonly withOptions: (options: TimeoutOptions) => AnyFetch;
  /** The Agent class of the implementation's own undici (the runtime's for global fetch). */
  readonly Agent: new (options?: object) => AgentLike;
}

export type { AgentLike };

export type Scenario = (context: Context) => Promise<unknown>;

/** Limits far too long to fire during a scenario: every request and body is timed, none times out. */
const LIMITS = {
  headersMs: 60_000,
  bodyIdleMs: 60_000,
  uploadIdleMs: 60_000,
  totalMs: 60_000,
  firstEventMs: 60_000,
  eventIdleMs: 60_000,
} as const;

/**
 * `TICKWHEEL_TRANSPARENCY=rebuilt` measures the fallback design instead: the wrapper around a
 * fetch that ignores `init.dispatcher`, so responses are rebuilt around a timed relay (the
 * README's comparison of designs counts the scenarios that differ then).
 */
const REBUILT = process.env.TICKWHEEL_TRANSPARENCY === 'rebuilt';

function withoutDispatcher(fetchFn: AnyFetch): AnyFetch {
  return (input, init) => fetchFn(input, init === undefined ? init : { ...init, dispatcher: undefined });
}

/** Node's global fetch and undici.fetch of undici 6, 7 and 8 (8 on Node >= 22.19). */
const implementations = FETCH_IMPLEMENTATIONS.map((impl) => ({ ...impl, fetch: impl.fetch }));

/**
 * Declares a differential suite: for each fetch implementation (Node's global fetch and
 * undici.fetch 6, 7 and 8), `body` registers scenarios through `same`, each run once against the bare
 * fetch and once against `withTimeouts(fetch)` on the same server, their observation logs
 * compared with toEqual.
 */
export function differential(
  title: string,
  body: (same: (name: string, scenario: Scenario, timeoutMs?: number) => void, deviation: Deviation) => void,
): void {
  describe.each(implementations)(`${title} (%s)`, (implementation) => {
    const server = new TransparencyServer();
    let wheel: TimingWheel;
    beforeAll(async () => {
      // Loads the runtime's undici, so that its global dispatcher (and Agent class) exist.
      await fetch('data:,');
      await server.start();
      wheel = new TimingWheel();
    });
    afterAll(async () => {
      await server.stop();
      wheel.close();
    });
    const context = (wrapped: boolean): Context => ({
      fetch: wrapped
        ? withTimeouts<AnyFetch>(REBUILT ? withoutDispatcher(implementation.fetch) : implementation.fetch, {
            ...LIMITS,
            wheel,
          })
        : implementation.fetch,
      server,
      base: server.base,
      Request: implementation.Request,
      Response: implementation.Response,
      wrapped,
      withOptions: (options) =>
        wrapped ? withTimeouts<AnyFetch>(implementation.fetch, { ...options, wheel }) : implementation.fetch,
      Agent: implementation.Agent(),
    });
    body(
      (name, scenario, timeoutMs = 10_000) => {
        it(name, { timeout: timeoutMs }, async () => {
          const bare = await scenario(context(false));
          const timed = await scenario(context(true));
          expect(timed).toEqual(bare);
          // Every timed request released its handle once its body was done with.
          await expect.poll(() => wheel.size, { timeout: 2_000 }).toBe(0);
        });
      },
      (name, scenario, check) => {
        it(`deviation (README): ${name}`, { timeout: 10_000 }, async () => {
          const bare = await scenario(context(false));
          const timed = await scenario(context(true));
          check(bare, timed);
        });
      },
    );
  });
}

/**
 * Registers a scenario where the wrapper knowingly differs from bare fetch, as listed in the
 * README: `check` asserts what each side does.
 */
export type Deviation = (name: string, scenario: Scenario, check: (bare: unknown, timed: unknown) => void) => void;

/** An error as a caller can observe it: class, name, message, code, and its cause, recursively. */
export function describeError(error: unknown, depth = 0): unknown {
  if (error === null || typeof error !== 'object') return { thrown: error };
  // Non-errors (undici's redirect-loop cause is its internal response, with timings) by class only.
  if (!(error instanceof Error) && !(error instanceof DOMException)) return { class: error.constructor?.name };
  const e = error as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
  return {
    class: (error as object).constructor?.name,
    name: e.name,
    message: e.message,
    code: e.code,
    cause: e.cause === undefined ? undefined : depth > 2 ? 'deeper' : describeError(e.cause, depth + 1),
  };
}

/** How a promise settles: its value through `describe`, or its error. */
export async function outcome<T>(
  promise: Promise<T> | (() => Promise<T>),
  describe: (value: T) => unknown = (value) => value,
): Promise<unknown> {
  try {
    const value = await (typeof promise === 'function' ? promise() : promise);
    return { fulfilled: describe(value) };
  } catch (error) {
    return { rejected: describeError(error) };
  }
}

/** What a synchronous call does: its result through `describe`, or what it throws. */
export function attempt<T>(fn: () => T, describe: (value: T) => unknown = () => 'returned'): unknown {
  try {
    return { returned: describe(fn()) };
  } catch (error) {
    return { threw: describeError(error) };
  }
}

/** Everything a caller can see of a Response without reading its body. */
export function describeResponse(res: Response, context: Context): unknown {
  const proto = Object.getPrototypeOf(res) as object;
  return {
    prototypeIsResponse: proto === context.Response.prototype,
    instanceOf: res instanceof context.Response,
    ownKeys: Reflect.ownKeys(res).map(String),
    tag: Object.prototype.toString.call(res),
    status: res.status,
    statusText: res.statusText,
    ok: res.ok,
    type: res.type,
    url: res.url.replace(context.base, 'BASE'),
    redirected: res.redirected,
    headers: [...res.headers].filter(([name]) => name !== 'date' && name !== 'keep-alive'),
    bodyUsed: res.bodyUsed,
    body: describeBody(res),
  };
}

/** The body stream's state, without touching its data. */
export function describeBody(res: Response): unknown {
  const body = res.body;
  if (body === null) return null;
  return { class: body.constructor.name, locked: body.locked, same: res.body === body };
}

/** Bytes as something comparable: length and a checksum. */
export function digest(bytes: ArrayBuffer | Uint8Array): { byteLength: number; sum: number } {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let sum = 0;
  for (let i = 0; i < view.length; i++) sum = (sum * 31 + view[i]) >>> 0;
  return { byteLength: view.byteLength, sum };
}

/**
 * Reads a body stream to the end with a reader. How the bytes are cut into chunks depends on
 * the network, so only the chunk type and the text are compared.
 */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<{ chunkTypes: string[]; text: string }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const chunkTypes = new Set<string>();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { chunkTypes: [...chunkTypes], text: text + decoder.decode() };
    chunkTypes.add(value.constructor.name);
    text += decoder.decode(value, { stream: true });
  }
}

/** Lets pending reactions and I/O callbacks run. */
export async function turn(ms = 0): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
