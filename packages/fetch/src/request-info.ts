/**
 * What the wrapper reads from fetch's `(input, init)` without consuming it: URL, method, signal, body replay.
 */

/** The fields of a fetch `init` the wrapper looks at; the rest is handed through untouched. */
export interface InitLike {
  method?: string;
  body?: unknown;
  signal?: AbortSignal | null;
  [key: string]: unknown;
}

/** The fields of a fetch `Request` the wrapper looks at. */
interface RequestLike {
  readonly url: string;
  readonly method: string;
  readonly signal?: AbortSignal;
  readonly body: unknown;
  clone(): RequestLike;
}

/** True for a `Request` (of any fetch implementation) as fetch's first argument. */
export function isRequest(input: unknown): input is RequestLike {
  return (
    typeof input === 'object' &&
    input !== null &&
    !(input instanceof URL) &&
    typeof (input as RequestLike).url === 'string' &&
    typeof (input as RequestLike).clone === 'function'
  );
}

/** The request URL as a string, for errors. */
export function requestUrl(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  if (isRequest(input)) return input.url;
  return String(input);
}

/** The request method, upper case, as fetch normalises it. */
export function requestMethod(input: unknown, init: InitLike | undefined): string {
  const method = init?.method ?? (isRequest(input) ? input.method : undefined);
  return typeof method === 'string' ? method.toUpperCase() : 'GET';
}

/**
 * The caller's signal: `init.signal` wins over a Request's own, as in fetch, and
 * `init.signal: null` means none at all (fetch then ignores the Request's signal).
 */
export function callerSignal(input: unknown, init: InitLike | undefined): AbortSignal | undefined {
  const signal = init?.signal;
  if (signal !== undefined) return signal ?? undefined;
  return isRequest(input) && input.signal != null ? input.signal : undefined;
}

/**
 * The members of fetch's RequestInit dictionary. With any of them present, fetch's Request
 * constructor treats `init` as "not empty" and resets a Request input's referrer and referrer
 * policy (Fetch standard, the Request constructor, step 25).
 */
const REQUEST_INIT_MEMBERS = [
  'method',
  'headers',
  'body',
  'referrer',
  'referrerPolicy',
  'mode',
  'credentials',
  'cache',
  'redirect',
  'integrity',
  'keepalive',
  'signal',
  'duplex',
  'priority',
  'window',
  'dispatcher',
] as const;

/**
 * The init fetch gets for one attempt: every member of the caller's `init` that fetch would
 * read, own or inherited (fetch reads dictionary members through the prototype chain, so an
 * `Object.create(base)` init keeps its method and body), except `timeouts`, plus the wrapper's
 * `signal` and `dispatcher`. Adding them makes the init "not empty", which would reset a
 * Request input's referrer; when the caller's init was empty, the Request's own referrer and
 * policy are passed along so that what reaches the server does not change.
 */
export function attemptInit(
  input: unknown,
  init: InitLike | undefined,
  signal: AbortSignal,
  dispatcher: unknown,
): InitLike {
  const attempt = init == null ? {} : copyInit(init);
  if (isRequest(input) && !REQUEST_INIT_MEMBERS.some((key) => init?.[key] !== undefined)) {
    attempt.referrer = (input as RequestLike & { referrer: string }).referrer;
    attempt.referrerPolicy = (input as RequestLike & { referrerPolicy: string }).referrerPolicy;
  }
  attempt.signal = signal;
  attempt.dispatcher = dispatcher;
  return attempt;
}

/**
 * Whether the request can be sent again for a retry: bodies that are values (strings, buffers,
 * blobs, form data) can; streams and async iterables are consumed by the first attempt.
 */
export function isReplayable(init: InitLike | undefined): boolean {
  // Without an init body, a Request input's body is cloned before each attempt instead.
  return init?.body === undefined || isValueBody(init.body);
}

function isValueBody(body: unknown): boolean {
  return (
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams ||
    body instanceof FormData
  );
}

/** `init` without its `timeouts` member, every member fetch would read (own or inherited) kept. */
export function copyInit(init: InitLike): InitLike {
  const copy: Record<string, unknown> = {};
  for (const key in init) {
    if (key !== 'timeouts') copy[key] = init[key];
  }
  // Members that are not enumerable (getters of a class instance) are read by fetch too.
  for (const key of REQUEST_INIT_MEMBERS) {
    if (!(key in copy) && init[key] !== undefined) copy[key] = init[key];
  }
  return copy;
}

/** The symbol undici 6 keeps a Request's own dispatcher under, per Request class; null: none found. */
const dispatcherKeys = new WeakMap<object, symbol | null>();

/** {@link requestDispatcher}'s answer for a Request whose dispatcher, if any, cannot be read. */
export const UNREADABLE: unique symbol = Symbol('unreadable dispatcher');

/**
 * The dispatcher a Request input carries (undici's `new Request(url, { dispatcher })`), which
 * fetch prefers to the global one unless `init.dispatcher` is given: undefined when the input is
 * not a Request or its Request has none, {@link UNREADABLE} when the Request keeps it where it
 * cannot be read (undici 7 and 8: a private field; undici 6 keeps it under a symbol of its own).
 */
export function requestDispatcher(input: unknown): unknown {
  if (!isRequest(input)) return undefined;
  const proto = Object.getPrototypeOf(input) as object;
  let key = dispatcherKeys.get(proto);
  if (key === undefined) {
    key = Object.getOwnPropertySymbols(input).find((symbol) => symbol.description === 'dispatcher') ?? null;
    dispatcherKeys.set(proto, key);
  }
  return key === null ? UNREADABLE : (input as unknown as Record<symbol, unknown>)[key];
}

/** The fields of a fetch `Request` whose headers the wrapper may copy. */
interface HeadersSource {
  readonly headers?: unknown;
}

/**
 * Sets header `name` of an attempt's init to `budgetMs` (whole ms, rounded down), on a copy of
 * the headers fetch would send: the init's own, else a Request input's (an init's headers
 * replace a Request's). A value the caller set that is a smaller whole number is kept.
 */
export function setBudgetHeader(attempt: InitLike, input: unknown, name: string, budgetMs: number): void {
  const source = attempt.headers ?? (isRequest(input) ? (input as HeadersSource).headers : undefined);
  const headers = new Headers(source as ConstructorParameters<typeof Headers>[0]);
  // Rounded to the µs first: an absolute time less the attempt's start is 4999.999... for a totalMs of 5000.
  const budget = budgetMs > 0 ? Math.floor(Math.round(budgetMs * 1_000) / 1_000) : 0;
  const theirs = headers.get(name);
  if (theirs === null || !/^\d+$/.test(theirs.trim()) || Number(theirs) > budget) headers.set(name, String(budget));
  attempt.headers = headers;
}
