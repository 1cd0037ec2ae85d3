/**
 * http-deadlines: a client calls an express shop; the shop's handler asks a pricing service over
 * HTTP and an inventory over gRPC. `serverTimeouts` gives each shop request a 1.5 s deadline:
 * the handler sees it as `currentDeadline()`, its fetch (`withTimeouts`, sending the remaining
 * budget in `connect-timeout-ms`) and its gRPC call (`deadlineInterceptor`) get what is left of
 * it, and the client gets a 503 when it passes, whatever the handler does later.
 *
 * Four requests:
 * 1. in budget: both downstream calls answer in time; the pricing service saw the shop's
 *    remaining budget as its own deadline, not its 10 s default;
 * 2. a slow pricing service: the shop answers 503 at 1.5 s; the pricing service stops working
 *    at its propagated deadline;
 * 3. a slow inventory: the same over gRPC;
 * 4. the caller sends `connect-timeout-ms: 150`: the shop's deadline shrinks to 150 ms, and so
 *    does everything downstream.
 *
 * Run: `node examples/http-deadlines/src/main.mjs`.
 */
import { pathToFileURL } from 'node:url';
import { DEADLINE_HEADER, SHOP_DEADLINE_MS, startInventory, startPricing, startShop } from './services.mjs';

const REQUESTS = [
  { name: 'in budget', sku: 'apple', pricingDelayMs: 20, stockDelayMs: 30 },
  { name: 'slow pricing service', sku: 'durian', pricingDelayMs: 5_000, stockDelayMs: 30 },
  { name: 'slow inventory', sku: 'quince', pricingDelayMs: 20, stockDelayMs: 5_000 },
  { name: "the caller's 150 ms budget", sku: 'kiwi', pricingDelayMs: 5_000, stockDelayMs: 30, callerBudgetMs: 150 },
];

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts the three services, makes the four requests, prints each request's trace and closes
 * everything.
 *
 * @param {{ print?: (line: string) => void }} [options] - `print` defaults to console.log
 * @returns {Promise<{ summary: string, requests: object[] }>} per request: what the client got, when, and every hop's trace
 */
export async function main({ print = console.log } = {}) {
  let started = performance.now();
  let entries = [];
  const trace = (who, text) => entries.push({ t: Math.round(performance.now() - started), who, text });

  const inventory = await startInventory(trace);
  const pricing = await startPricing(trace);
  const shop = await startShop(trace, { pricingUrl: pricing.url, inventoryAddress: inventory.address });
  const requests = [];
  try {
    print(
      `shop ${shop.url} (express, ${SHOP_DEADLINE_MS} ms deadline), pricing ${pricing.url} (express), inventory ${inventory.address} (gRPC)`,
    );
    // One request first, so the client's connection and fetch's code are ready before any is timed.
    await fetch(`${shop.url}/quote/warm-up?pricingDelayMs=0&stockDelayMs=0`).then((res) => res.text());

    for (const spec of REQUESTS) {
      entries = [];
      const path = `/quote/${spec.sku}?pricingDelayMs=${spec.pricingDelayMs}&stockDelayMs=${spec.stockDelayMs}`;
      const headers = spec.callerBudgetMs === undefined ? {} : { [DEADLINE_HEADER]: String(spec.callerBudgetMs) };
      started = performance.now();
      trace(
        'client',
        `GET ${path}${spec.callerBudgetMs === undefined ? '' : ` (${DEADLINE_HEADER}: ${spec.callerBudgetMs})`}`,
      );
      const res = await fetch(`${shop.url}${path}`, { headers });
      const body = await res.text();
      const t = Math.round(performance.now() - started);
      trace('client', `${res.status}: ${body.trim()}`);
      // Let the other hops finish reporting (stopped work, late answers) before the next request.
      await sleep(150);
      requests.push({ ...spec, status: res.status, body, t, trace: entries });

      print(`- ${spec.name}: GET /quote/${spec.sku}`);
      for (const e of entries.sort((a, b) => a.t - b.t))
        print(`    t=${String(e.t).padStart(4)} ms  ${e.who.padEnd(9)} ${e.text}`);
    }
  } finally {
    await shop.close();
    await pricing.close();
    await inventory.close();
  }
  return {
    summary: `${requests.length} requests: ${requests.map((r) => `${r.status} after ${r.t} ms`).join(', ')}`,
    requests,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
