import { defineProject } from 'vitest/config';
import { peerAliases } from '../../scripts/peer-ends.mjs';

export default defineProject({
  // The peers at the other end of their ranges in a TICKWHEEL_PEERS pass (.ci/run); none otherwise.
  resolve: { alias: peerAliases() },
  test: {
    name: 'http',
    include: ['test/**/*.test.ts'],
  },
});
