/**
 * A stub fetch that never answers, for the requests a timeout must end (the fetch suite's
 * channel samples and lib/channel-kernels.mjs): it rejects when its signal aborts, as fetch does.
 */
export function stallingStub(_input, init) {
  return new Promise((_resolve, reject) =>
    init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true }),
  );
}
