// The public API of @tickwheel/ws/browser (dead-server detection for any WHATWG WebSocket): named exports only.
export { watch, SilenceWatch, DeadEvent } from './silence-watch.js';
export { WATCH_DEFAULTS } from './options.js';
export type { ResolvedWatchOptions } from './options.js';
export type { WatchableSocket, WatchOptions } from './types.js';
