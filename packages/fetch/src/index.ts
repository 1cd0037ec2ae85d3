// The public API of @tickwheel/fetch: named exports only (the timers and the transport tap stay unexported).
export { withTimeouts } from './with-timeouts.js';
export { TimeoutError } from './timeout-error.js';
export type { FetchPhaseTimes, FetchTimeoutBudget, TimeoutPhase } from './timeout-error.js';
export { DEFAULTS, IDEMPOTENT_METHODS } from './options.js';
export type {
  FetchLike,
  ResponseLike,
  RetryOptions,
  StreamEvent,
  TimedFetch,
  TimeoutOptions,
  TimeoutsInit,
} from './types.js';
export { FETCH_TIMEOUT_CHANNEL, FETCH_RETRY_CHANNEL } from './channels.js';
export type { FetchTimeoutMessage, FetchRetryMessage } from './channels.js';
