// The public API of @tickwheel/grpc: named exports only.
export { deadlineInterceptor } from './deadline-interceptor.js';
export { DEFAULTS } from './options.js';
export { serverDeadlineInterceptor } from './server-deadline-interceptor.js';
export type {
  DeadlineInterceptorOptions,
  DeadlineLimit,
  MethodDeadlineOptions,
  RetryOptions,
  ServerDeadlineInterceptorOptions,
  ServerDeadlineLimit,
  ServerMethodDeadlineOptions,
} from './types.js';
export { GRPC_DEADLINE_CHANNEL, GRPC_HANDLER_ABORT_CHANNEL } from './channels.js';
export type { GrpcDeadlineMessage, GrpcHandlerAbortMessage, GrpcSide, HandlerAbortReason } from './channels.js';
