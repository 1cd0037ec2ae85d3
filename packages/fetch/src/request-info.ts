/**
 * What the wrapper reads from fetch's `(input, init)` without consuming anything: the URL and
 * method for errors, the caller's signal, and whether the request body can be sent again.
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
  return typeof input === 'object' && input !== null && !(input instanceof URL) && typeof (input as RequestLike).url === 'string' && typeof (input as RequestLike).clone === 'function';
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

/** The caller's signal: `init.signal` wins over a Request's own, as in fetch. */
export function callerSignal(input: unknown, init: InitLike | undefined): AbortSignal | undefined {
  if (init?.signal != null) return init.signal;
  return isRequest(input) && input.signal != null ? input.signal : undefined;
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
