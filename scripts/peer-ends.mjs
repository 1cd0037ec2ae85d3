/**
 * The other ends of the adapters' peer ranges: which installed npm alias stands in for each peer in an extra test pass.
 *
 * The workspace develops and tests against the newest supported version of each peer (its
 * devDependencies). The other end of each peer range (the oldest supported major, or the floor of
 * a range that spans one major) is installed beside it under an npm alias (root devDependencies,
 * e.g. `"ioredis-5": "npm:ioredis@^5.11.1"`), so `npm ci` brings both and the extra pass needs no
 * network. `TICKWHEEL_PEERS=<pass>` makes the adapters' vitest projects resolve each peer of that
 * pass to its alias (`peerAliases()` in their configs), and forked test fixtures import it by the
 * name `peerModule()` gives them; `.ci/run` runs each pass once, on one Node, after the main runs.
 *
 * A peer with a third supported major (undici 6, 7 and 8) gets a pass of its own.
 */

/** Per pass: the projects it runs, and the alias each peer resolves to. */
export const passes = {
  oldest: {
    projects: ['fetch', 'grpc', 'ws', 'redis', 'otel'],
    peers: {
      ioredis: 'ioredis-5',
      undici: 'undici-6',
      '@grpc/grpc-js': 'grpc-js-1.10',
      ws: 'ws-8.0',
      '@opentelemetry/api': 'opentelemetry-api-1.7',
    },
  },
};

/** The pass named by TICKWHEEL_PEERS, or undefined for the ordinary run. */
function currentPass() {
  const name = process.env.TICKWHEEL_PEERS;
  if (name === undefined || name === '') return undefined;
  const pass = passes[name];
  if (pass === undefined) {
    throw new RangeError(`TICKWHEEL_PEERS must be one of ${Object.keys(passes).join(', ')}, got ${name}`);
  }
  return pass;
}

/**
 * vitest `resolve.alias` entries for the current pass: each peer's bare name (and its subpaths)
 * to its alias; none in the ordinary run.
 */
export function peerAliases() {
  const pass = currentPass();
  if (pass === undefined) return [];
  return Object.entries(pass.peers).map(([peer, alias]) => ({
    find: new RegExp(`^${peer.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?=/|$)`),
    replacement: alias,
  }));
}

/** The module name a forked fixture imports for `peer`: its alias in the current pass, else `peer`. */
export function peerModule(peer) {
  return currentPass()?.peers[peer] ?? peer;
}
