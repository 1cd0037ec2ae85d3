import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'fetch',
    include: ['test/**/*.test.ts'],
    // The leak test forces full collections to measure retained heap.
    execArgv: ['--expose-gc'],
  },
});
