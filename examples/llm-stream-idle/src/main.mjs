/**
 * llm-stream-idle: the openai SDK streaming chat completions through
 * `fetch: withTimeouts(fetch, { eventIdleMs })` from a local OpenAI-style upstream. A healthy
 * slow stream (a token every 150 ms) runs to its end; a stuck upstream that keeps the connection
 * alive with `: keep-alive` comments fails in eventIdleMs, where a byte-level idle limit
 * (bodyIdleMs, undici's bodyTimeout) never fires, since every comment resets it.
 *
 * Run: `node examples/llm-stream-idle/src/main.mjs`.
 */
import { pathToFileURL } from 'node:url';
import { TimeoutError, withTimeouts } from '@tickwheel/fetch';
import OpenAI from 'openai';
import { startLlmUpstream } from './llm-upstream.mjs';

const SCENARIOS = [
  {
    name: 'healthy slow stream',
    model: 'gpt-healthy',
    limits: { headersMs: 2_000, bodyIdleMs: 1_000, firstEventMs: 2_000, eventIdleMs: 400 },
  },
  {
    name: 'stuck behind keep-alive comments',
    model: 'gpt-stuck',
    limits: { headersMs: 2_000, bodyIdleMs: 1_000, firstEventMs: 2_000, eventIdleMs: 400 },
  },
  {
    // What users have today: a byte-level idle limit never fires, so only a total cap ends it.
    name: 'stuck, bodyIdleMs only (capped by totalMs)',
    model: 'gpt-stuck',
    limits: { headersMs: 1_000, bodyIdleMs: 1_000, totalMs: 1_500 },
  },
];

/** Streams one completion with `limits`; never throws. */
async function runScenario(baseURL, scenario) {
  const client = new OpenAI({
    apiKey: 'sk-local',
    baseURL,
    maxRetries: 0,
    fetch: withTimeouts(fetch, scenario.limits),
  });
  const started = performance.now();
  let text = '';
  try {
    const stream = await client.chat.completions.create({
      model: scenario.model,
      messages: [{ role: 'user', content: 'Say something about timers.' }],
      stream: true,
    });
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    return { outcome: 'ok', text, elapsedMs: Math.round(performance.now() - started) };
  } catch (error) {
    const elapsedMs = Math.round(performance.now() - started);
    if (!(error instanceof TimeoutError)) return { outcome: 'error', error: String(error), text, elapsedMs };
    const why = error.message.replace(`${error.method} ${error.url}: `, '');
    return { outcome: 'timeout', phase: error.phase, timeoutMs: error.timeoutMs, why, text, elapsedMs };
  }
}

/**
 * Starts the upstream, runs every scenario, prints what happened and closes the upstream.
 *
 * @param {{ print?: (line: string) => void }} [options] - `print` defaults to console.log
 * @returns {Promise<{ summary: string, results: object[] }>}
 */
export async function main({ print = console.log } = {}) {
  const upstream = await startLlmUpstream({ tokenMs: 150 });
  const results = [];
  try {
    print(`OpenAI-style upstream on ${upstream.url}; the openai SDK with fetch: withTimeouts(fetch, ...)`);
    for (const scenario of SCENARIOS) {
      const result = await runScenario(`${upstream.url}/v1`, scenario);
      // Let the upstream see the connection close when the client gave up.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const stream = upstream.streams.at(-1);
      results.push({ name: scenario.name, ...result, upstreamCut: stream?.closedEarly ?? false });
      const limits = Object.entries(scenario.limits)
        .map(([key, value]) => `${key} ${value}`)
        .join(', ');
      print(`- ${scenario.name}: model ${scenario.model} [${limits}]`);
      print(`    text so far: ${JSON.stringify(result.text)}`);
      print(
        result.outcome === 'timeout'
          ? `    -> TimeoutError, phase '${result.phase}': ${result.why} after ${result.elapsedMs} ms`
          : `    -> ${result.outcome} after ${result.elapsedMs} ms${result.error ? `: ${result.error}` : ''}`,
      );
    }
  } finally {
    await upstream.close();
  }
  const stuck = results[1];
  const summary =
    `healthy stream finished; the stuck one failed in eventIdleMs (${stuck.phase ?? stuck.outcome}, ${stuck.elapsedMs} ms)` +
    `; with bodyIdleMs alone only totalMs ended it`;
  print(summary);
  return { summary, results };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
