import { createServer, type Server } from "node:net";
import { InvalidInputError } from "@perdure/engine";

function listenOnFreeLoopbackPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0, exclusive: true }, () => resolve(server));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * `count` distinct TCP ports free on 127.0.0.1. Every port is held by a
 * listener until all are picked, so the operating system cannot hand out
 * one port twice; then all listeners close. Another program may still take a
 * port before the test binds it, so bind soon.
 *
 * @example
 * const [httpPort, metricsPort] = await findFreeLoopbackPorts(2);
 */
export async function findFreeLoopbackPorts(count: number): Promise<number[]> {
  if (!Number.isSafeInteger(count) || count <= 0) {
    throw new InvalidInputError(`port count ${String(count)} is invalid: use a positive integer`);
  }
  const servers: Server[] = [];
  try {
    for (let index = 0; index < count; index += 1) servers.push(await listenOnFreeLoopbackPort());
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === "string") throw new Error(`a loopback listener reported no TCP port: ${String(address)}`);
      return address.port;
    });
  } finally {
    await Promise.all(servers.map(closeServer));
  }
}
