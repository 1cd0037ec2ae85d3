'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- a mocha --require hook for ws's CommonJS suite: it replaces entries of require.cache */
// Runs ws's own test suite with a heartbeat on every server and every client socket it creates:
// loaded with `mocha --require` (see run-ws-suite.sh), it replaces the exports of ws's
// lib/websocket.js and lib/websocket-server.js, before any test loads them, with Proxies whose
// construct trap builds the bare object and starts `heartbeat()` on it. Nothing else changes:
// statics, prototypes and `instanceof` pass through the Proxy.
//
// WS_DIR: the ws checkout whose suite runs. HEARTBEAT_ON: server, client, both (default) or none.
// HEARTBEAT_OPTIONS: JSON options for every heartbeat (default {}: the defaults).
// HEARTBEAT_LOG=1: print each 'dead' event to stderr.
const path = require('node:path');

const wsDir = process.env.WS_DIR;
if (!wsDir) throw new Error('attach-heartbeat: set WS_DIR to the ws checkout');
const on = process.env.HEARTBEAT_ON ?? 'both';
const options = JSON.parse(process.env.HEARTBEAT_OPTIONS ?? '{}');
const { heartbeat } = require(path.join(__dirname, '../../dist/index.js'));

const log = process.env.HEARTBEAT_LOG === '1';
/** Starts a heartbeat on `target`, logging its 'dead' events when asked to. */
function attachTo(target, side) {
  const beat = heartbeat(target, options);
  if (log)
    beat.on('dead', (e) =>
      process.stderr.write(`attach-heartbeat: ${side} heartbeat: dead after ${e.waitedMs.toFixed(1)} ms\n`),
    );
}

let servers = 0;
let clients = 0;
process.on('exit', () => {
  process.stderr.write(`attach-heartbeat: heartbeat on ${servers} servers, ${clients} client sockets (${on})\n`);
});

/** Replaces the exports of ws's `file` with a Proxy that calls `attach` on each new instance. */
function wrap(file, attach) {
  const resolved = require.resolve(path.join(wsDir, 'lib', file));
  const Class = require(resolved);
  require.cache[resolved].exports = new Proxy(Class, {
    construct(target, args, newTarget) {
      const instance = Reflect.construct(target, args, newTarget);
      attach(instance, args);
      return instance;
    },
  });
}

// A client socket is built with an address; ws builds a server's sockets with null.
wrap('websocket.js', (ws, [address]) => {
  if (address === null || (on !== 'client' && on !== 'both')) return;
  attachTo(ws, 'client');
  clients++;
});
wrap('websocket-server.js', (wss) => {
  if (on !== 'server' && on !== 'both') return;
  attachTo(wss, 'server');
  servers++;
});
