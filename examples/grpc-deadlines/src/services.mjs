/**
 * The three services of the example, all on 127.0.0.1, each writing what it sees to a shared
 * trace:
 *
 * - server B (`shop.Inventory`, grpc-js + `serverDeadlineInterceptor`): answers after a delay,
 *   and stops working when its call's deadline aborts `currentDeadline().signal`;
 * - the tax service (node:http): answers after a delay; it notices when the caller gives up;
 * - server A (`shop.Frontend`, grpc-js + `serverDeadlineInterceptor`, capping BatchQuote at
 *   250 ms): asks B (through a `deadlineInterceptor` client) and the tax service (through
 *   `withTimeouts(fetch)`) at once. Neither call is given a timeout of its own: both inherit the
 *   ambient deadline of the call A is serving.
 */
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { currentDeadline } from '@tickwheel/core';
import { withTimeouts } from '@tickwheel/fetch';
import { deadlineInterceptor, serverDeadlineInterceptor } from '@tickwheel/grpc';

const definition = protoLoader.loadSync(new URL('../proto/shop.proto', import.meta.url).pathname, {
  keepCase: false,
  longs: Number,
  defaults: true,
});
/** The generated service constructors: `shop.Frontend`, `shop.Inventory`. */
export const shop = grpc.loadPackageDefinition(definition).shop;

/** Server A caps BatchQuote calls at this many ms, whatever the client allows. */
export const BATCH_CAP_MS = 250;

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

/** The status A answers with when one of its calls failed. */
function toStatus(error) {
  if (error.code !== undefined && error.details !== undefined)
    return { code: error.code, details: `server B: ${error.details}` };
  if (error.name === 'TimeoutError')
    return { code: grpc.status.DEADLINE_EXCEEDED, details: `tax service: ${error.message}` };
  return { code: grpc.status.UNAVAILABLE, details: String(error.message ?? error) };
}

function bindServer(server) {
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
}

/** Starts server B. */
export async function startInventory(trace) {
  const server = new grpc.Server({ interceptors: [serverDeadlineInterceptor()] });
  server.addService(shop.Inventory.service, {
    Stock(call, callback) {
      const { sku, delayMs } = call.request;
      const deadline = currentDeadline();
      trace('B', `Stock(${sku}) received with ${left()} ms left; working ${delayMs} ms`);
      work(delayMs, deadline?.signal).then(
        () => {
          trace('B', `Stock(${sku}) answers`);
          callback(null, { inStock: sku.length * 3 });
        },
        (reason) =>
          trace('B', `Stock(${sku}) stops working: its deadline signal aborted (${reason.name}: ${reason.message})`),
      );
    },
  });
  const port = await bindServer(server);
  return {
    address: `127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
    server,
  };
}

/** Starts the HTTP tax service: `GET /tax?sku=...&delayMs=...`. */
export async function startTaxService(trace) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const delayMs = Number(url.searchParams.get('delayMs'));
    const sku = url.searchParams.get('sku');
    trace(
      'tax',
      `GET /tax?sku=${sku} received (x-request-timeout-ms: ${req.headers['x-request-timeout-ms']}); working ${delayMs} ms`,
    );
    const timer = setTimeout(() => {
      trace('tax', `answers for ${sku}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ taxCents: 19 * sku.length }));
    }, delayMs);
    res.on('close', () => {
      if (!res.writableFinished) {
        clearTimeout(timer);
        trace('tax', `the caller went away before the answer (${sku}): request aborted`);
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Starts server A, which calls server B at `inventoryAddress` and the tax service at `taxUrl`. */
export async function startFrontend(trace, { inventoryAddress, taxUrl }) {
  const inventory = new shop.Inventory(inventoryAddress, grpc.credentials.createInsecure(), {
    interceptors: [deadlineInterceptor()],
  });
  const timedFetch = withTimeouts(fetch);
  // Connect to B and load fetch's implementation (undici) up front, so no call's budget is spent on them.
  await new Promise((resolve, reject) =>
    inventory.waitForReady(Date.now() + 5_000, (error) => (error ? reject(error) : resolve())),
  );
  await fetch(`${taxUrl}/tax?sku=warm-up&delayMs=0`).then((res) => res.json());

  async function quote(call, name) {
    const { sku, inventoryDelayMs, taxDelayMs } = call.request;
    trace('A', `${name}(${sku}) received with ${left()} ms left; asks B and the tax service at once`);
    const stock = new Promise((resolve, reject) =>
      inventory.Stock({ sku, delayMs: inventoryDelayMs }, (error, reply) => (error ? reject(error) : resolve(reply))),
    );
    const tax = timedFetch(`${taxUrl}/tax?sku=${encodeURIComponent(sku)}&delayMs=${taxDelayMs}`, {
      headers: { 'x-request-timeout-ms': String(left()) },
    }).then((res) => res.json());
    const [stockResult, taxResult] = await Promise.allSettled([stock, tax]);
    for (const [what, result] of [
      ['B', stockResult],
      ['tax service', taxResult],
    ]) {
      if (result.status === 'rejected') {
        const error = result.reason;
        const why =
          error.details === undefined
            ? `${error.name}: ${error.message}`
            : `${grpc.status[error.code]}: ${error.details}`;
        trace('A', `its call to ${what} failed: ${why}`);
        const budget = error.budget;
        // Where the time went (@tickwheel/core's TimeoutBudget, on fetch's TimeoutError and the gRPC error alike).
        if (budget !== undefined)
          trace(
            'A',
            `  budget: ${budget.limit}${budget.inherited ? ` inherited from ${budget.source}` : ''}, ${budget.budgetMs} ms in all, ` +
              `${budget.spentBeforeMs} ms gone before the call, ${budget.elapsedMs} ms in it, its timer ${budget.lateMs} ms late`,
          );
      }
    }
    if (stockResult.status === 'rejected') throw stockResult.reason;
    if (taxResult.status === 'rejected') throw taxResult.reason;
    return {
      sku,
      priceCents: 100 * sku.length,
      taxCents: taxResult.value.taxCents,
      inStock: stockResult.value.inStock,
    };
  }

  const handler = (name) => (call, callback) => {
    quote(call, name).then(
      (reply) => {
        trace('A', `${name}(${reply.sku}) answers`);
        callback(null, reply);
      },
      // When A's own deadline has passed, its interceptor has already answered DEADLINE_EXCEEDED
      // and drops this; otherwise the failure of B or of the tax service is passed on.
      (error) => callback(toStatus(error)),
    );
  };

  const server = new grpc.Server({
    interceptors: [
      serverDeadlineInterceptor({ overrides: { '/shop.Frontend/BatchQuote': { maxTimeoutMs: BATCH_CAP_MS } } }),
    ],
  });
  server.addService(shop.Frontend.service, { Quote: handler('Quote'), BatchQuote: handler('BatchQuote') });
  const port = await bindServer(server);
  return {
    address: `127.0.0.1:${port}`,
    close: async () => {
      inventory.close();
      await new Promise((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
