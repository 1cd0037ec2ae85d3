import { defineProject } from 'vitest/config';
import { peerAliases } from '../../scripts/peer-ends.mjs';

export default defineProject({
  // The peers at the other end of their ranges in a TICKWHEEL_PEERS pass (.ci/run); none otherwise.
  resolve: { alias: peerAliases() },
  test: {
    name: 'fetch',
    include: ['test/**/*.test.ts'],
    // The leak test forces full collections to measure retained heap.
    execArgv: ['--expose-gc'],
  },
});
