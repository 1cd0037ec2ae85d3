/**
 * A local stand-in for an OpenAI-compatible chat completions endpoint, on 127.0.0.1: it streams
 * `chat.completion.chunk` events as the real API does (`data: {...}`, then `data: [DONE]`), one
 * token every `tokenMs`. The model name says how it behaves: `gpt-healthy` streams `tokens`
 * tokens and ends; `gpt-stuck` streams three, then stalls behind `: keep-alive` comments every
 * 50 ms, as an upstream behind a proxy does when its model worker hangs.
 */
import http from 'node:http';

const WORDS = [
  'Timing',
  ' wheels',
  ' keep',
  ' one',
  ' timer',
  ' per',
  ' process',
  ' busy',
  ' and',
  ' the',
  ' rest',
  ' cheap.',
];

function chunk(content, finish = null) {
  const body = {
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: 'local',
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/**
 * Starts the upstream on an ephemeral port.
 * @returns {Promise<{ url: string, streams: { model: string, closedEarly: boolean }[], close(): Promise<void> }>}
 */
export async function startLlmUpstream({ tokenMs = 60 } = {}) {
  const streams = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (part) => (body += part));
    req.on('end', () => {
      const { model } = JSON.parse(body);
      const stream = { model, closedEarly: false };
      streams.push(stream);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const tokens = model === 'gpt-stuck' ? 3 : WORDS.length;
      let sent = 0;
      let timer;
      res.on('close', () => {
        clearTimeout(timer);
        stream.closedEarly = !res.writableFinished;
      });
      const next = () => {
        if (sent < tokens) {
          res.write(chunk(WORDS[sent++]));
          timer = setTimeout(next, tokenMs);
        } else if (model === 'gpt-stuck') {
          res.write(': keep-alive\n\n');
          timer = setTimeout(next, 50);
        } else {
          res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
        }
      };
      next();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    streams,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
