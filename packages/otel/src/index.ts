// The public API of @tickwheel/otel: named exports only.
// Must not depend on: the adapters at run time. Nothing internal: recorders.ts and attributes.ts stay unexported.
export { instrumentTickwheel } from './instrument-tickwheel.js';
export { METRICS } from './instruments.js';
export { TIMEOUT_EVENT } from './span-events.js';
export { DEFAULTS } from './options.js';
export type { InstrumentTickwheelOptions, TickwheelInstrumentation } from './types.js';
