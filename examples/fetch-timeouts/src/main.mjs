/**
 * fetch-timeouts: Node's global fetch wrapped by @tickwheel/fetch, against a deliberately slow
 * local server. Each scenario shows one limit: headers, body idle, total, retries of an
 * idempotent request, a 503 retried after its Retry-After, no retry of a POST, the retry budget,
 * and an ambient deadline.
 *
 * Run: `node examples/fetch-timeouts/src/main.mjs`.
 */
import { pathToFileURL } from 'node:url';
import { withDeadline } from '@tickwheel/core';
import { TimeoutError, withTimeouts } from '@tickwheel/fetch';
import { startSlowServer } from './slow-server.mjs';

/**
 * The scenarios. `limits` are the per-request `timeouts`; `run` makes the request with the
 * wrapped fetch and reads the body, so body timeouts surface too.
 */
const SCENARIOS = [
  {
    name: 'fast answer',
    path: '/fast',
    limits: { headersMs: 200, totalMs: 500 },
  },
  {
    name: 'headers too slow',
    path: '/slow-headers?ms=1000',
    limits: { headersMs: 100 },
  },
  {
    name: 'body stalls',
    path: '/stall-body?ms=1000',
    limits: { headersMs: 200, bodyIdleMs: 100 },
  },
  {
    name: 'body trickles past the total',
    path: '/trickle?everyMs=40&chunks=25',
    limits: { bodyIdleMs: 150, totalMs: 300 },
  },
  {
    name: 'retried until it answers',
    path: '/flaky?key=get&fail=2',
    limits: { headersMs: 100, retry: { limit: 3, backoffMs: 20 } },
  },
  {
    name: 'a 503 retried after its Retry-After',
    path: '/busy?key=busy&fail=1',
    limits: { headersMs: 100, retry: { limit: 2 } },
  },
  {
    name: 'POST is not retried',
    path: '/flaky?key=post&fail=2',
    method: 'POST',
    limits: { headersMs: 100, retry: { limit: 3, backoffMs: 20 } },
  },
  {
    name: 'retry budget runs out',
    path: '/slow-headers?ms=1000',
    // Attempts start at about 0, 110 and 220 ms; the budget ends the third one at 275 ms.
    limits: { headersMs: 100, retry: { limit: 10, backoffMs: 10, backoffFactor: 1, budgetMs: 275 } },
  },
  {
    name: 'ambient deadline',
    path: '/slow-headers?ms=1000',
    limits: {},
    deadlineMs: 150,
  },
];

/** Makes one scenario's request and reads its body; never throws. */
async function runScenario(timedFetch, baseUrl, scenario) {
  const retries = [];
  const limits = scenario.limits.retry
    ? {
        ...scenario.limits,
        retry: {
          ...scenario.limits.retry,
          onRetry: (error, attempt, response) =>
            retries.push(response ? { attempt, status: response.status } : { attempt, phase: error.phase }),
        },
      }
    : scenario.limits;
  const request = async () => {
    const res = await timedFetch(`${baseUrl}${scenario.path}`, {
      method: scenario.method ?? 'GET',
      body: scenario.method === 'POST' ? 'order=42' : undefined,
      timeouts: limits,
    });
    return { status: res.status, body: await res.text() };
  };
  const started = performance.now();
  try {
    const { status, body } = scenario.deadlineMs ? await withDeadline(scenario.deadlineMs, request) : await request();
    return {
      outcome: 'ok',
      status,
      bodyBytes: body.length,
      elapsedMs: Math.round(performance.now() - started),
      retries,
    };
  } catch (error) {
    const elapsedMs = Math.round(performance.now() - started);
    if (!(error instanceof TimeoutError)) return { outcome: 'error', error: String(error), elapsedMs, retries };
    // The message starts with "METHOD URL: "; the account prints the rest.
    const why = error.message.replace(`${error.method} ${error.url}: `, '');
    return {
      outcome: 'timeout',
      phase: error.phase,
      timeoutMs: error.timeoutMs,
      message: error.message,
      why,
      elapsedMs,
      retries,
    };
  }
}

/**
 * Starts the slow server, runs every scenario, prints what happened and closes the server.
 *
 * @param {{ print?: (line: string) => void }} [options] - `print` defaults to console.log
 * @returns {Promise<{ summary: string, results: object[] }>} one result per scenario, with the
 *   requests the server received for it
 */
export async function main({ print = console.log } = {}) {
  const server = await startSlowServer();
  const timedFetch = withTimeouts(fetch);
  const results = [];
  try {
    print(`slow server on ${server.url}; global fetch wrapped with withTimeouts(fetch)`);
    // Node loads fetch's implementation (undici) on first use: do that outside every scenario's limits.
    await fetch(`${server.url}/fast`).then((res) => res.text());
    for (const scenario of SCENARIOS) {
      const before = new Map(server.hits);
      const result = await runScenario(timedFetch, server.url, scenario);
      // Give the server a moment to count requests that the client aborted.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const requests = [...server.hits].reduce((n, [key, count]) => n + count - (before.get(key) ?? 0), 0);
      results.push({
        name: scenario.name,
        method: scenario.method ?? 'GET',
        path: scenario.path,
        limits: scenario.limits,
        deadlineMs: scenario.deadlineMs,
        requests,
        ...result,
      });
      const limits = Object.entries(scenario.limits)
        .map(([k, v]) => (k === 'retry' ? `retry ${JSON.stringify(v)}` : `${k} ${v}`))
        .concat(scenario.deadlineMs ? [`withDeadline(${scenario.deadlineMs})`] : [])
        .join(', ');
      const outcome =
        result.outcome === 'ok'
          ? `${result.status} OK, ${result.bodyBytes} bytes`
          : result.outcome === 'timeout'
            ? `TimeoutError, phase '${result.phase}': ${result.why}`
            : result.error;
      print(`- ${scenario.name}: ${scenario.method ?? 'GET'} ${scenario.path} [${limits}]`);
      print(
        `    -> ${outcome} after ${result.elapsedMs} ms; server saw ${requests} request(s)${result.retries.length ? `; retried after ${result.retries.map((r) => `attempt ${r.attempt} (${r.phase ?? r.status})`).join(', ')}` : ''}`,
      );
    }
  } finally {
    await server.close();
  }
  const timeouts = results.filter((r) => r.outcome === 'timeout');
  return {
    summary: `${results.length} requests: ${results.length - timeouts.length} answered, ${timeouts.length} timed out (${timeouts.map((r) => r.phase).join(', ')})`,
    results,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
