/**
 * A client in its own process, so that the example can kill or freeze it: it connects as
 * `process.argv[3]` to `process.argv[2]`, says hello, tells the parent over IPC, and from then
 * on only answers the server's pings (ws does that by itself).
 */
import WebSocket from 'ws';

const [url, name] = process.argv.slice(2);
const ws = new WebSocket(`${url}?name=${encodeURIComponent(name)}`);
ws.on('open', () => {
  ws.send(JSON.stringify({ type: 'hello', name }));
  process.send({ type: 'open', name, pid: process.pid });
});
ws.on('close', () => process.disconnect?.());
