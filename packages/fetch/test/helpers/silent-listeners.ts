import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP listener on 127.0.0.1 that accepts connections and never says a word: a TLS client's
 * ClientHello goes unanswered, so an `https:` request hangs in its handshake.
 */
export class SilentServer {
  /** Connections accepted since start. */
  connections = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((socket) => {
    this.connections++;
    this.sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => this.sockets.delete(socket));
  });

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/*
 * A listener that never accepts, with a backlog of 1 that the child fills itself, so that the
 * kernel drops a new SYN and a client's TCP connect hangs. Node cannot make one (a net.Server
 * accepts everything), so Debian's Python does: it prints its port once the queue is full.
 */
const FULL_BACKLOG = `
import socket, sys, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)
port = s.getsockname()[1]
fill = []
for _ in range(8):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(('127.0.0.1', port))
    except BlockingIOError: pass
    fill.append(c)
time.sleep(0.2)
print(port, flush=True)
time.sleep(60)
`;

/** A Python child holding a listener whose accept queue is full; stop() kills it by pid. */
export class FullBacklogListener {
  private child: ChildProcess | undefined;

  async start(): Promise<number> {
    const child = spawn('/usr/bin/python3', ['-c', FULL_BACKLOG], { stdio: ['ignore', 'pipe', 'inherit'] });
    this.child = child;
    return new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
    });
  }

  stop(): void {
    const pid = this.child?.pid;
    if (pid !== undefined && this.child!.exitCode === null) process.kill(pid, 'SIGKILL');
  }
}
