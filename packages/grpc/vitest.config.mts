import { defineProject } from 'vitest/config';
import { peerAliases } from '../../scripts/peer-ends.mjs';

export default defineProject({
  // The peers at the other end of their ranges in a TICKWHEEL_PEERS pass (.ci/run); none otherwise.
  resolve: { alias: peerAliases() },
  test: {
    name: 'grpc',
    include: ['test/**/*.test.ts'],
    // Installs Debian's python3-grpcio when missing (the interop test's Python client needs it).
    globalSetup: ['test/global-setup.ts'],
    // The integration tests make 10,000 calls and start a Python client: leave them room on a busy machine.
    testTimeout: 60_000,
  },
});
