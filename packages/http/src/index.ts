// The public API of @tickwheel/http: named exports only. The framework adapters are the subpaths
// @tickwheel/http/express, /fastify and /koa.
export { serverTimeouts } from './server-timeouts.js';
export { DEFAULTS } from './options.js';
export type {
  CloseOptions,
  DeadlineMiddlewareOptions,
  HttpTimeoutKind,
  ServerTimeouts,
  ServerTimeoutsEvents,
  ServerTimeoutsOptions,
  TimedRequest,
  TimedResponse,
  TimedServer,
  TimeoutEvent,
} from './types.js';
export { HTTP_TIMEOUT_CHANNEL } from './channels.js';
export type { HttpTimeoutMessage } from './channels.js';
