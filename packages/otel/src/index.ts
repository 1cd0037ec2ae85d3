// The public API of @tickwheel/otel: named exports only.
export { instrumentTickwheel } from './instrument-tickwheel.js';
export { METRICS } from './instruments.js';
export { TIMEOUT_EVENT } from './span-events.js';
export { DEFAULTS } from './options.js';
export type { InstrumentTickwheelOptions, TickwheelInstrumentation } from './types.js';
