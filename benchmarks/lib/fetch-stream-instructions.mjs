/**
 * Client instructions per MiB of an SSE body (issue 43: the event scanner costs at most 5% more
 * than the bare body read), counted by cachegrind as lib/fetch-instructions.mjs counts requests:
 * one request of the long length minus one of the short length, divided by the MiB between, so
 * the request's own cost cancels out. The server is a plain node:http child (not counted) that
 * writes OpenAI-style `data: {...}` events of about 200 bytes as fast as the client reads.
 *
 * Candidates, each body read to its end through its reader:
 * - `bare fetch`: `fetch(url)`;
 * - `tickwheel`: `withTimeouts(fetch, { bodyIdleMs })`, no event option (the scanner is off);
 * - `tickwheel events`: `withTimeouts(fetch, { bodyIdleMs, firstEventMs, eventIdleMs })`, the
 *   default notion of progress.
 *
 *   node lib/fetch-stream-instructions.mjs [shortMiB] [longMiB]   # prints the counts for this Node
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { countInstructions, valgrindAvailable } from './cachegrind.mjs';
import { LIMIT_MS, NODE_FLAGS } from './fetch-instructions.mjs';
import { forkWorker, isMain, serveParent } from './harness.mjs';

const SELF = fileURLToPath(import.meta.url);
/** MiB read before the counted request: past fetch's and the scanner's tiering up. */
export const WARMUP_MIB = 16;
export const STREAM_CANDIDATES = ['bare fetch', 'tickwheel', 'tickwheel events'];

/** One MiB of chat.completion.chunk events (the last one padded to fill it exactly). */
function eventMiB() {
  const events = [];
  let size = 0;
  for (let i = 0; size < 1024 * 1024 - 400; i++) {
    const body = {
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: ` token${i}` } }],
    };
    const event = `data: ${JSON.stringify(body)}\n\n`;
    events.push(event);
    size += Buffer.byteLength(event);
  }
  events.push(`: ${'x'.repeat(1024 * 1024 - size - 4)}\n\n`);
  return Buffer.from(events.join(''));
}

/** The kernel: WARMUP_MIB one-MiB requests, then one of `mib` MiB. */
async function kernel(candidate, mib) {
  const url = process.env.FETCH_STREAM_URL;
  let request = (path) => fetch(`${url}${path}`);
  if (candidate !== 'bare fetch') {
    const { withTimeouts } = await import('@tickwheel/fetch');
    const events = candidate === 'tickwheel events' ? { firstEventMs: LIMIT_MS, eventIdleMs: LIMIT_MS } : {};
    const timed = withTimeouts(fetch, { bodyIdleMs: LIMIT_MS, ...events });
    request = (path) => timed(`${url}${path}`);
  }
  const read = async (path) => {
    const reader = (await request(path)).body.getReader();
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return bytes;
      bytes += value.byteLength;
    }
  };
  for (let i = 0; i < WARMUP_MIB; i++) await read('/1');
  await read(`/${mib}`);
  process.exit(0);
}

function serve() {
  const mib = eventMiB();
  const server = http.createServer((req, res) => {
    let left = Number(req.url.slice(1));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': String(left * mib.length) });
    const pump = () => {
      while (left > 0) {
        left--;
        if (!res.write(mib)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  server.keepAliveTimeout = 600_000;
  server.listen(0, '127.0.0.1', () =>
    serveParent({}, { hello: { port: server.address().port }, close: () => server.closeAllConnections() }),
  );
}

/**
 * Instructions per MiB of each candidate under `node`: (long - short) / (longMiB - shortMiB).
 * @returns `{ [candidate]: { median, samples: [perMiB] } }`, or undefined without valgrind
 */
export async function fetchStreamInstructions(node = process.execPath, shortMiB = 2, longMiB = 6) {
  if (!valgrindAvailable()) return undefined;
  const server = forkWorker(SELF, ['--serve-stream'], { label: 'SSE server', execArgv: [] });
  const { port } = await server.ready;
  try {
    const env = { ...process.env, FETCH_STREAM_URL: `http://127.0.0.1:${port}` };
    const options = { kernel: SELF, env, nodeFlags: NODE_FLAGS };
    const results = {};
    for (const candidate of STREAM_CANDIDATES) {
      const short = countInstructions(node, 'stream', candidate, shortMiB, options);
      const long = countInstructions(node, 'stream', candidate, longMiB, options);
      const perMiB = Math.round((long - short) / (longMiB - shortMiB));
      results[candidate] = { median: perMiB, samples: [perMiB] };
    }
    return results;
  } finally {
    await server.close();
  }
}

if (process.argv[2] === '--serve-stream') {
  serve();
} else if (process.argv[2] === 'stream') {
  await kernel(process.argv[3], Number(process.argv[4]));
} else if (isMain(import.meta.url)) {
  const results = await fetchStreamInstructions(
    process.execPath,
    Number(process.argv[2] ?? 2),
    Number(process.argv[3] ?? 6),
  );
  console.log(JSON.stringify({ node: process.version, undici: process.versions.undici, results }));
}
