/**
 * Keeps the example server running for a browser: open the printed URL and watch the page.
 * Human-scale limits: ping after 5 s of quiet, 2 s to answer, a status message every second.
 *
 * Run: `node examples/ws-heartbeat/src/serve.mjs` (PORT=8080 by default; Ctrl+C to stop).
 */
import { startLivenessServer } from './server.mjs';

const server = await startLivenessServer({
  port: Number(process.env.PORT ?? 8080),
  pingIntervalMs: 5_000,
  pongTimeoutMs: 2_000,
  readerIdleMs: 10_000,
  statusEveryMs: 1_000,
});
console.log(`open ${server.url} (Ctrl+C to stop)`);
let printed = 0;
const log = setInterval(() => {
  for (const e of server.events.slice(printed)) console.log(JSON.stringify(e));
  printed = server.events.length;
}, 500);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    clearInterval(log);
    await server.close();
  });
}
