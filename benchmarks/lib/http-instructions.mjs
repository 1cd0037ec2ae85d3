/**
 * Server instructions per keep-alive "hello" request, counted by cachegrind as the other suites
 * count (lib/cachegrind.mjs): the server process of one candidate (lib/http-candidates.mjs) runs
 * under valgrind twice, for a short and a long run, and the figure is
 * (instructions of the long run - instructions of the short run) / (requests between them).
 *
 * The client is a child process the server forks (this file with `--client`); valgrind traces
 * only the process it started, so the client's own work is not counted. It makes WARMUP requests
 * and then the counted ones, one at a time on one keep-alive connection: with requests in
 * flight, how many of them one socket read carries depends on timing, which valgrind and the
 * machine's load change from run to run, and so would the count. The server exits when its
 * client does.
 *
 * The old generation starts at OLD_SPACE_MB and V8 runs its fixed GC schedule, as in
 * lib/fetch-instructions.mjs, so that whether a mark-compact lands in a window does not decide
 * the difference (scavenges are counted).
 *
 *   node lib/http-instructions.mjs [shortN] [longN] [candidates]   # prints the counts for this Node
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { answerParent, childValue, instructionsPerOp, isMain, valgrindAvailable } from './harness.mjs';
import { createCandidateServer, HTTP_CANDIDATES } from './http-candidates.mjs';

const SELF = fileURLToPath(import.meta.url);
/** Requests before the counted window: node:http's parser and the candidates' code tier up first. */
export const WARMUP = Number(process.env.HTTP_WARMUP ?? 2_000);
export const OLD_SPACE_MB = 1_024;
export const NODE_FLAGS = [`--initial-old-space-size=${OLD_SPACE_MB}`, '--predictable-gc-schedule'];

/** The counted process: a candidate's server, and a client child making WARMUP + `ops` requests. */
async function serve(candidate, ops) {
  const server = await createCandidateServer(candidate);
  const requests = await childValue(SELF, ['--client', String(server.port), String(WARMUP + ops)], {
    execArgv: process.execArgv,
  });
  server.close();
  process.exit(requests === WARMUP + ops ? 0 : 1);
}

/** The client child: `total` requests, one at a time, on one keep-alive socket. */
async function client(port, total) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < total; i++) {
    await new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        })
        .on('error', reject);
    });
  }
  agent.destroy();
  answerParent(total);
}

/**
 * Instructions per request of each candidate's server under `node`: `instructionsPerOp`, long run minus short run.
 * @returns `{ [candidate]: { median, samples: [perRequest] } }`, or undefined without valgrind
 */
export function httpInstructions(node = process.execPath, shortN = 1_000, longN = 3_000, candidates = HTTP_CANDIDATES) {
  if (!valgrindAvailable()) return undefined;
  const results = {};
  for (const candidate of candidates) {
    const count = instructionsPerOp(
      node,
      'serve',
      candidate,
      { shortOps: shortN, longOps: longN },
      { kernel: SELF, nodeFlags: NODE_FLAGS },
    );
    const perRequest = Math.round(count.perOp);
    console.log(`  instructions: ${candidate} ${perRequest} per request (${count.short} / ${count.long})`);
    results[candidate] = { median: perRequest, samples: [perRequest] };
  }
  return results;
}

if (isMain(import.meta.url) && process.argv[2] === 'serve') {
  await serve(process.argv[3], Number(process.argv[4]));
} else if (isMain(import.meta.url) && process.argv[2] === '--client') {
  await client(Number(process.argv[3]), Number(process.argv[4]));
} else if (isMain(import.meta.url)) {
  const results = httpInstructions(
    process.execPath,
    Number(process.argv[2] ?? 1_000),
    Number(process.argv[3] ?? 3_000),
    process.argv[4]?.split(',') ?? HTTP_CANDIDATES,
  );
  console.log(JSON.stringify({ node: process.version, results }));
}
