/**
 * grpc-deadlines: a client calls server A; A calls server B (gRPC) and a tax service (HTTP).
 * The client's deadline travels with every hop: A receives it in `grpc-timeout`, its handler
 * sees it as the ambient `currentDeadline()`, and A's calls to B (`deadlineInterceptor`) and to
 * the tax service (`withTimeouts(fetch)`) inherit what is left of it.
 *
 * Three calls:
 * 1. `Quote` in budget: everything answers within the client's 400 ms;
 * 2. `Quote` with a slow tax service: the client's 400 ms run out; the tax request is aborted,
 *    and the client sees DEADLINE_EXCEEDED naming its own method limit;
 * 3. `BatchQuote` with a slow server B: the client allows 2 s, but server A caps the method at
 *    250 ms; B's handler is told to stop, and the client sees DEADLINE_EXCEEDED naming A's max limit.
 *
 * Run: `node examples/grpc-deadlines/src/main.mjs`.
 */
import { pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { deadlineInterceptor } from '@tickwheel/grpc';
import { BATCH_CAP_MS, shop, startFrontend, startInventory, startTaxService } from './services.mjs';

/** The client's limits: per method, as a grpc-js client configures them with the interceptor. */
export const CLIENT_LIMITS = { '/shop.Frontend/Quote': 400, '/shop.Frontend/BatchQuote': 2_000 };

const CALLS = [
  { name: 'in budget', method: 'Quote', request: { sku: 'apple', inventoryDelayMs: 30, taxDelayMs: 40 } },
  { name: 'slow tax service', method: 'Quote', request: { sku: 'durian', inventoryDelayMs: 30, taxDelayMs: 1_500 } },
  {
    name: 'slow server B, capped by A',
    method: 'BatchQuote',
    request: { sku: 'quince', inventoryDelayMs: 1_500, taxDelayMs: 20 },
  },
];

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts the three services and the client, makes the three calls, prints each call's trace and
 * closes everything.
 *
 * @param {{ print?: (line: string) => void }} [options] - `print` defaults to console.log
 * @returns {Promise<{ summary: string, calls: object[] }>} per call: the status the client saw and every hop's trace
 */
export async function main({ print = console.log } = {}) {
  let started = performance.now();
  let entries = [];
  const trace = (who, text) => entries.push({ t: Math.round(performance.now() - started), who, text });

  const inventory = await startInventory(trace);
  const tax = await startTaxService(trace);
  const frontend = await startFrontend(trace, { inventoryAddress: inventory.address, taxUrl: tax.url });
  const client = new shop.Frontend(frontend.address, grpc.credentials.createInsecure(), {
    interceptors: [deadlineInterceptor({ overrides: CLIENT_LIMITS })],
  });
  const calls = [];
  try {
    print(
      `server A ${frontend.address}, server B ${inventory.address}, tax service ${tax.url}; client limits ${JSON.stringify(CLIENT_LIMITS)}, A caps BatchQuote at ${BATCH_CAP_MS} ms`,
    );
    // Connect first, so the first call's budget is not spent on the TCP and HTTP/2 handshakes.
    await new Promise((resolve, reject) =>
      client.waitForReady(Date.now() + 5_000, (error) => (error ? reject(error) : resolve())),
    );

    for (const spec of CALLS) {
      entries = [];
      started = performance.now();
      const budgetMs = CLIENT_LIMITS[`/shop.Frontend/${spec.method}`];
      trace('client', `${spec.method}(${spec.request.sku}) with a ${budgetMs} ms limit`);
      const outcome = await new Promise((resolve) =>
        client[spec.method](spec.request, (error, reply) => {
          const t = Math.round(performance.now() - started);
          // A server-enforced deadline says only grpc-js's own 'Deadline exceeded'; which limit
          // fired travels in the tickwheel-deadline trailer.
          const trailer = error?.metadata?.get('tickwheel-deadline')[0];
          resolve(
            error
              ? { t, code: grpc.status[error.code], details: error.details, trailer: trailer?.toString() }
              : { t, code: 'OK', reply },
          );
        }),
      );
      trace(
        'client',
        outcome.code === 'OK'
          ? `OK: ${JSON.stringify(outcome.reply)}`
          : `${outcome.code}: ${outcome.details}${outcome.trailer ? ` [tickwheel-deadline: ${outcome.trailer}]` : ''}`,
      );
      // Let the other hops finish reporting (aborted work, closed requests) before the next call.
      await sleep(100);
      const limit = /\((\w+) limit/.exec(outcome.details ?? '')?.[1] ?? /limit=(\w+)/.exec(outcome.trailer ?? '')?.[1];
      calls.push({
        name: spec.name,
        method: spec.method,
        sku: spec.request.sku,
        budgetMs,
        ...outcome,
        limit,
        trace: entries,
      });

      print(`- ${spec.name}: ${spec.method}(${spec.request.sku})`);
      for (const e of entries.sort((a, b) => a.t - b.t))
        print(`    t=${String(e.t).padStart(4)} ms  ${e.who.padEnd(6)} ${e.text}`);
    }
  } finally {
    client.close();
    await frontend.close();
    await inventory.close();
    await tax.close();
  }
  const failed = calls.filter((c) => c.code !== 'OK');
  return {
    summary:
      `${calls.length} calls: ${calls.length - failed.length} OK, ` +
      failed.map((c) => `${c.code} after ${c.t} ms (${c.limit} limit)`).join(', '),
    calls,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
