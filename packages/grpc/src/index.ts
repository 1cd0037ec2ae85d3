// The public API of @tickwheel/grpc: named exports only.
// Nothing internal: options.ts and the call classes stay unexported.
export { deadlineInterceptor } from './deadline-interceptor.js';
export { serverDeadlineInterceptor } from './server-deadline-interceptor.js';
export type {
  DeadlineInterceptorOptions,
  DeadlineLimit,
  MethodDeadlineOptions,
  ServerDeadlineInterceptorOptions,
  ServerDeadlineLimit,
  ServerMethodDeadlineOptions,
} from './types.js';
