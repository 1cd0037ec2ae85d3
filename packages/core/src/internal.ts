/**
 * `@tickwheel/core/internal`: what the adapters share with core but users should not build on.
 * Must not depend on: anything outside core. Not public API (no semver promise).
 */
export { optionKit, orDefault } from './options-kit.js';
export type { OptionKit } from './options-kit.js';
