// The public API of @tickwheel/http: named exports only. The framework adapters are the subpaths
// @tickwheel/http/express, /fastify and /koa.
export { serverTimeouts } from './server-timeouts.js';
export { eventStream, EVENT_STREAM_HEADERS } from './event-stream.js';
export { eventStreamBody } from './event-stream-body.js';
export { DEFAULTS } from './options.js';
export { EVENT_STREAM_DEFAULTS } from './event-stream-options.js';
export type {
  CloseOptions,
  DeadlineMiddlewareOptions,
  EventStream,
  EventStreamBody,
  EventStreamControls,
  EventStreamEnd,
  EventStreamEndReason,
  EventStreamOptions,
  HttpTimeoutKind,
  ServerTimeouts,
  SendOptions,
  ServerTimeoutsEvents,
  ServerTimeoutsOptions,
  TimedRequest,
  TimedResponse,
  TimedServer,
  TimeoutEvent,
} from './types.js';
export { HTTP_EVENT_STREAM_END_CHANNEL, HTTP_TIMEOUT_CHANNEL } from './channels.js';
export type { HttpEventStreamEndMessage, HttpTimeoutMessage } from './channels.js';
