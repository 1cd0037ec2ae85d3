/**
 * The three services of the example, all on 127.0.0.1, each writing what it sees to a shared
 * trace:
 *
 * - the shop (express + `serverTimeouts`, a 1.5 s handler deadline): `GET /quote/:sku` asks the
 *   pricing service (HTTP, through `withTimeouts(fetch)`) and the inventory (gRPC, through a
 *   `deadlineInterceptor` client) at once. Neither call has a timeout of its own: both get what
 *   is left of the request's deadline, and the pricing request carries it in `connect-timeout-ms`;
 * - the pricing service (express + `serverTimeouts`, a 10 s default deadline): reads the
 *   caller's `connect-timeout-ms`, so its handler's deadline is the shop's remaining budget, not
 *   its own 10 s; it stops working when that deadline aborts `currentDeadline().signal`;
 * - the inventory (grpc-js + `serverDeadlineInterceptor`): answers after a delay, and stops when
 *   its call's deadline (from `grpc-timeout`) aborts its signal.
 */
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { currentDeadline } from '@tickwheel/core';
import { withTimeouts } from '@tickwheel/fetch';
import { deadlineInterceptor, serverDeadlineInterceptor } from '@tickwheel/grpc';
import { serverTimeouts } from '@tickwheel/http';
import express from 'express';

/** The shop's handler deadline, in ms. */
export const SHOP_DEADLINE_MS = 1_500;
/** The pricing service's own default deadline: what it would allow a caller that sent none. */
export const PRICING_DEADLINE_MS = 10_000;
/** The header the deadline travels in between the HTTP services (Connect RPC's name). */
export const DEADLINE_HEADER = 'connect-timeout-ms';

const json = {
  serialize: (value) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes) => JSON.parse(bytes.toString()),
};
/** The inventory's one method, JSON over gRPC (no .proto needed for one message each way). */
const INVENTORY_SERVICE = {
  Stock: {
    path: '/shop.Inventory/Stock',
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};
const InventoryClient = grpc.makeGenericClientConstructor(INVENTORY_SERVICE, 'Inventory');

/** The ms left of the ambient deadline, rounded; undefined when there is none. */
function left() {
  const deadline = currentDeadline();
  return deadline === undefined ? undefined : Math.round(deadline.remaining());
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function work(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** Listens on 127.0.0.1; resolves with the port. */
function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

/** Closes an HTTP server and its connections. */
function closeHttp(server) {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Reports each limit `serverTimeouts` enforced on the trace. */
function traceTimeouts(controller, trace, who) {
  controller.on('timeout', ({ kind, limitMs, outcome }) =>
    trace(
      who,
      `serverTimeouts: the ${kind} deadline of ${limitMs} ms passed; the caller got ${outcome === 'answered' ? '503' : `a ${outcome} connection`}`,
    ),
  );
}

/** Starts the inventory: `Stock({ sku, delayMs })`. */
export async function startInventory(trace) {
  const server = new grpc.Server({ interceptors: [serverDeadlineInterceptor()] });
  server.addService(INVENTORY_SERVICE, {
    Stock(call, callback) {
      const { sku, delayMs } = call.request;
      trace('inventory', `Stock(${sku}) received with ${left()} ms left; working ${delayMs} ms`);
      work(delayMs, currentDeadline()?.signal).then(
        () => {
          trace('inventory', `Stock(${sku}) answers`);
          callback(null, { inStock: sku.length * 3 });
        },
        (reason) => trace('inventory', `Stock(${sku}) stops working: its deadline signal aborted (${reason.name})`),
      );
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** Starts the pricing service: `GET /price/:sku?delayMs=...`. */
export async function startPricing(trace) {
  const app = express();
  app.get('/price/:sku', async (req, res) => {
    const { sku } = req.params;
    const delayMs = Number(req.query.delayMs);
    const deadline = currentDeadline();
    trace(
      'pricing',
      `GET /price/${sku} received (${DEADLINE_HEADER}: ${req.get(DEADLINE_HEADER)}); its deadline: ${left()} ms left, not its own ${PRICING_DEADLINE_MS}; working ${delayMs} ms`,
    );
    try {
      await work(delayMs, deadline?.signal);
    } catch (reason) {
      trace('pricing', `GET /price/${sku} stops working: its deadline signal aborted (${reason.name})`);
      return;
    }
    trace('pricing', `answers for ${sku}`);
    res.json({ priceCents: 100 * sku.length });
  });
  const server = http.createServer(app);
  const timeouts = serverTimeouts(server, { defaultTimeoutMs: PRICING_DEADLINE_MS });
  traceTimeouts(timeouts, trace, 'pricing');
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, close: () => closeHttp(server) };
}

/** Starts the shop, which asks the pricing service at `pricingUrl` and the inventory at `inventoryAddress`. */
export async function startShop(trace, { pricingUrl, inventoryAddress }) {
  const inventory = new InventoryClient(inventoryAddress, grpc.credentials.createInsecure(), {
    interceptors: [deadlineInterceptor()],
  });
  // Each attempt sends what is left of the ambient deadline, in whole ms, in the header.
  const timedFetch = withTimeouts(fetch, { deadlineHeader: DEADLINE_HEADER });
  // Connect to the inventory and load fetch's implementation (undici) up front, so no request's
  // budget is spent on them.
  await new Promise((resolve, reject) =>
    inventory.waitForReady(Date.now() + 5_000, (error) => (error ? reject(error) : resolve())),
  );
  await fetch(`${pricingUrl}/price/warm-up?delayMs=0`).then((res) => res.json());

  const app = express();
  app.get('/quote/:sku', async (req, res) => {
    const { sku } = req.params;
    const { pricingDelayMs, stockDelayMs } = req.query;
    trace('shop', `GET /quote/${sku} received with ${left()} ms left; asks pricing and inventory at once`);
    const price = timedFetch(`${pricingUrl}/price/${encodeURIComponent(sku)}?delayMs=${Number(pricingDelayMs)}`).then(
      (answer) => (answer.ok ? answer.json() : Promise.reject(new Error(`pricing answered ${answer.status}`))),
    );
    const stock = new Promise((resolve, reject) =>
      inventory.Stock({ sku, delayMs: Number(stockDelayMs) }, (error, reply) =>
        error ? reject(error) : resolve(reply),
      ),
    );
    try {
      const [priced, stocked] = await Promise.all([price, stock]);
      trace('shop', `answers for ${sku}`);
      res.json({ sku, ...priced, ...stocked });
    } catch (error) {
      const why = error.details === undefined ? `${error.name}: ${error.message}` : grpc.status[error.code];
      // A downstream service may give up a moment before the shop's own deadline fires (it got
      // the same deadline, less the time in transit): then the handler answers 503 itself.
      // After the deadline its answer is dropped: no second response, no ERR_HTTP_HEADERS_SENT.
      const late = currentDeadline()?.signal.aborted === true;
      trace(
        'shop',
        `a downstream call failed (${why}); the handler answers 503${late ? ' after the deadline: dropped' : ''}`,
      );
      res.status(503).json({ error: why });
    }
    // The other call is still settling; it fails on the same deadline.
    await Promise.allSettled([price, stock]);
  });
  const server = http.createServer(app);
  const timeouts = serverTimeouts(server, { defaultTimeoutMs: SHOP_DEADLINE_MS });
  traceTimeouts(timeouts, trace, 'shop');
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      inventory.close();
      await closeHttp(server);
    },
  };
}
