/**
 * Serves a web page that watches its server with @tickwheel/ws/browser, loaded as the package
 * ships it (ES modules from dist/esm/browser, no bundler), for a human with a browser. The server
 * sends a keepalive every 2 s to a quiet page; the page's button asks it to go silent (it stops
 * sending anything to that page, as a vanished host would), and the page says when it gives up.
 * Hide the tab for a while meanwhile: a live server is not declared dead for it.
 *
 * Run: `node examples/ws-browser-watch/src/serve.mjs` (PORT=8080 by default; Ctrl+C to stop).
 */
import { startPageServer } from './page-server.mjs';

const server = await startPageServer({ port: Number(process.env.PORT ?? 8080), keepaliveMs: 2_000 });
console.log(`open ${server.url} (Ctrl+C to stop)`);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close());
