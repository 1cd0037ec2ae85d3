import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-ws-presence',
    include: ['test/**/*.test.mjs'],
    globalSetup: ['test/global-setup.mjs'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
