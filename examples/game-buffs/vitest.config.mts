import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-game-buffs',
    include: ['test/**/*.test.mjs'],
    globalSetup: ['test/global-setup.mjs'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
