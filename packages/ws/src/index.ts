// The public API of @tickwheel/ws: named exports only.
export { heartbeat, HeartbeatController } from './heartbeat.js';
export { DEFAULTS, DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_PONG_TIMEOUT_MS } from './options.js';
export type { ResolvedOptions } from './options.js';
export type {
  HeartbeatOptions,
  HeartbeatEvents,
  HeartbeatStats,
  LivenessState,
  DeadPeerEvent,
  IdleEvent,
  IdleKind,
  LimitEvent,
  LimitKind,
  PresenceTracker,
} from './types.js';
export { WS_TERMINATE_CHANNEL } from './channels.js';
export type { WsTerminateMessage, TerminateReason } from './channels.js';
