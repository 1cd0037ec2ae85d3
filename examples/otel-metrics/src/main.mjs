/**
 * otel-metrics: @tickwheel/otel turns every timeout of the other packages into OpenTelemetry
 * metrics, exposed on a Prometheus endpoint. The example starts the endpoint, makes requests
 * that time out in each package (fetch headers and body timeouts with retries, a gRPC call past
 * its deadline, a server cap, a WebSocket client that never answers a ping), then scrapes the
 * endpoint as Prometheus would and prints what it says.
 *
 * Run: `node examples/otel-metrics/src/main.mjs`.
 */
import { pathToFileURL } from 'node:url';
import { status as Status, credentials } from '@grpc/grpc-js';
import { withTimeouts } from '@tickwheel/fetch';
import { deadlineInterceptor } from '@tickwheel/grpc';
import WebSocket from 'ws';
import { startMetricsEndpoint, summarize, total } from './metrics-endpoint.mjs';
import { SlowClient, startGrpcServer, startHttpServer, startWsServer } from './services.mjs';

/** Settles to `'ok'` or to the error's name and phase (or gRPC status code name). */
async function outcome(promise) {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error.phase !== undefined) return `${error.name} (${error.phase})`;
    if (error.code !== undefined) return Status[error.code];
    throw error;
  }
}

async function fetchScenarios(origin, print) {
  const timedFetch = withTimeouts(fetch, { headersMs: 100, retry: { limit: 2, backoffMs: 20 } });
  // Requests whose headers come at once get a generous headersMs: on a busy machine a new
  // connection can take over 100 ms, and a timeout there would be counted with the others.
  const answered = { headersMs: 5_000 };
  print(
    `GET ${origin}/fast: ${await outcome(timedFetch(`${origin}/fast`, { timeouts: answered }).then((res) => res.text()))}`,
  );
  print(`GET ${origin}/stall (headersMs 100, 2 retries): ${await outcome(timedFetch(`${origin}/stall`))}`);
  print(
    `POST ${origin}/stall (not retried): ${await outcome(timedFetch(`${origin}/stall`, { method: 'POST', body: 'x' }))}`,
  );
  const stallBody = timedFetch(`${origin}/stall-body`, { timeouts: { ...answered, bodyIdleMs: 100, retry: 0 } }).then(
    (res) => res.text(),
  );
  print(`GET ${origin}/stall-body (bodyIdleMs 100): ${await outcome(stallBody)}`);
}

async function grpcScenarios(address, print) {
  const client = new SlowClient(address, credentials.createInsecure(), {
    interceptors: [deadlineInterceptor({ timeoutMs: 2_000, overrides: { '/demo.Slow/Wait': 150 } })],
  });
  const call = (name) =>
    new Promise((resolve, reject) => client[name]({}, (error, reply) => (error ? reject(error) : resolve(reply))));
  try {
    print(`gRPC /demo.Slow/Wait (client limit 150 ms, handler takes 1 s): ${await outcome(call('wait'))}`);
    print(`gRPC /demo.Slow/Capped (server cap 100 ms): ${await outcome(call('capped'))}`);
  } finally {
    client.close();
  }
}

async function wsScenarios(url, print) {
  const healthy = new WebSocket(url);
  // autoPong false: the client reads pings but never answers them, a peer that hung up silently.
  const mute = new WebSocket(url, { autoPong: false });
  const closed = (socket) => new Promise((resolve) => socket.once('close', (code) => resolve(code)));
  const started = performance.now();
  const muteClosed = closed(mute);
  const code = await Promise.race([
    muteClosed,
    new Promise((resolve) => setTimeout(resolve, 5_000, 'still open after 5 s')),
  ]);
  print(
    `ws: the mute client was closed with ${code} after ${Math.round(performance.now() - started)} ms; the healthy one is ${healthy.readyState === WebSocket.OPEN ? 'open' : 'not open'}`,
  );
  healthy.terminate();
  mute.terminate();
}

/**
 * Runs the example.
 * @param {{ print?: (line: string) => void }} [options]
 * @returns the scrape (`text`, parsed `samples`), the endpoint's `url` and a one-line `summary`
 */
export async function main({ print = console.log } = {}) {
  const endpoint = await startMetricsEndpoint();
  const servers = [];
  try {
    print(`metrics on ${endpoint.url} (@opentelemetry/exporter-prometheus, fed by instrumentTickwheel())`);
    const httpServer = await startHttpServer();
    servers.push(httpServer);
    await fetchScenarios(httpServer.origin, print);
    const grpcServer = await startGrpcServer();
    servers.push(grpcServer);
    await grpcScenarios(grpcServer.address, print);
    const wsServer = await startWsServer();
    servers.push(wsServer);
    await wsScenarios(wsServer.url, print);

    const { text, samples } = await endpoint.scrape();
    print(`scraped ${endpoint.url}: ${samples.length} samples; some of them:`);
    for (const line of text
      .split('\n')
      .filter((l) => l.startsWith('tickwheel_timeouts_total') || l.startsWith('tickwheel_fetch_retries_total')))
      print(`  ${line}`);
    for (const line of summarize(samples)) print(line);
    const timeouts = total(samples, 'tickwheel_timeouts_total');
    return {
      url: endpoint.url,
      text,
      samples,
      summary: `${timeouts} timeouts counted and scraped from a Prometheus endpoint`,
    };
  } finally {
    for (const server of servers.reverse()) await server.close();
    await endpoint.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
