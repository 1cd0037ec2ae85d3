import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'consumers',
    include: ['**/*.test.ts'],
    // Packs every package and installs the tarballs with their peers (from npm's cache) once.
    globalSetup: ['global-setup.ts'],
    testTimeout: 90_000,
    hookTimeout: 180_000,
  },
});
