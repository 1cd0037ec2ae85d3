import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'ws',
    include: ['test/**/*.test.ts'],
    // Installs Debian's chromium and python3-websockets when missing (the browser and Python tests need them).
    globalSetup: ['test/global-setup.ts'],
  },
});
