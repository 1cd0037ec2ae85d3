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
