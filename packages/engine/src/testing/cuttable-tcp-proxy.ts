/**
 * A TCP proxy on loopback that a test can cut, restore and point elsewhere:
 * a failing network, a stopped database server, or the virtual IP that
 * moves to a promoted standby.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

/** Where a proxy forwards to. */
export interface ProxyTarget {
  host: string;
  port: number;
}

/**
 * Forwards every connection to its target until {@link CuttableTcpProxy.cut}.
 *
 * @example
 * const proxy = new CuttableTcpProxy({ host: "127.0.0.1", port: 5432 });
 * await proxy.open(); // listens on proxy.port
 * await proxy.cut(); // every connection drops, new ones are refused
 * proxy.retarget({ host: "127.0.0.1", port: 5433 }); await proxy.open();
 */
export class CuttableTcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private target: ProxyTarget;
  /** The port it listens on (kept across cut and open); 0 until the first open. */
  port = 0;

  constructor(target: ProxyTarget) {
    this.target = target;
  }

  /** Listens (again) on its port. */
  async open(): Promise<void> {
    if (this.server !== undefined) return;
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Drops every connection and stops listening. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  }

  /** Sends new connections to `target` (existing ones keep theirs until cut). */
  retarget(target: ProxyTarget): void {
    this.target = target;
  }
}
