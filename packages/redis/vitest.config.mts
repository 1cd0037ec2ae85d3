import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'redis',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // The integration tests fork workers and start their own redis-servers: keep them bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
