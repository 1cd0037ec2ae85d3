/**
 * captureWarnings: the process warnings a test expects, taken from Node's printer so that the test log stays quiet.
 */

/**
 * Runs `fn` and returns its result with the warnings the process emitted meanwhile (and in the
 * turn after, when `process.emitWarning` delivers them), with Node's own listener, the one that
 * prints them to stderr, set aside until then. The caller asserts on them: a warning a test
 * expects is captured and checked, not printed.
 */
export async function captureWarnings<T>(fn: () => T): Promise<{ result: Awaited<T>; warnings: Error[] }> {
  const printers = process.listeners('warning');
  for (const printer of printers) process.off('warning', printer);
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  process.on('warning', onWarning);
  try {
    const result = await fn();
    await new Promise<void>((resolve) => setImmediate(resolve));
    return { result, warnings };
  } finally {
    process.off('warning', onWarning);
    for (const printer of printers) process.on('warning', printer);
  }
}
