// The public API of @tickwheel/ws/browser (dead-server detection for any WHATWG WebSocket): named exports only.
// Must not depend on: Node's modules or globals, @tickwheel/core, ws, or src/ outside src/browser (eslint.config.mjs enforces it).
export { watch, SilenceWatch, DeadEvent } from './silence-watch.js';
export { WATCH_DEFAULTS } from './options.js';
export type { ResolvedWatchOptions } from './options.js';
export type { WatchableSocket, WatchOptions } from './types.js';
