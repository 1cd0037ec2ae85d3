/**
 * `@tickwheel/core/internal`: what the adapters share with core but users should not build on.
 * Not part of the public API (no semver promise); depends on nothing outside core.
 */
export { optionKit, orDefault } from './options-kit.js';
export type { OptionKit } from './options-kit.js';
export { guardedPublisher, typedChannel } from './channel-kit.js';
