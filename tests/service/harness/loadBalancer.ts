/**
 * A load balancer in front of several service instances, built on http-proxy as a real one would
 * be: WebSocket upgrades and HTTP requests are spread round-robin over the targets that accept
 * connections. Each first checks that its target accepts a TCP connection and moves on to the
 * next target when it is refused (a killed or draining instance), so clients fail over to a
 * survivor. An HTTP request whose target dies under it is answered 502, as a real balancer does.
 *
 *   const balancer = await balancerForThisTest([a.port, b.port]); // closed when the test ends
 *   // balancer.socketUrl → ws://127.0.0.1:<port>/realtime, balancer.httpUrl → http://127.0.0.1:<port>
 *   balancer.routed // target port of every upgrade, in order
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import httpProxy from "http-proxy";
import { PROTOCOL_PATH } from "../../../src/lib/auction/protocol.ts";
import { cleanUpAfter } from "./stores.ts";

const PROBE_TIMEOUT_MS = 2_000;
/** How long a connection this side has ended may wait for the client's end before it is cut. */
const HALF_CLOSED_GRACE_MS = 1_000;

export interface LoadBalancer {
  readonly socketUrl: string;
  /** The operator console and every other HTTP route, through the balancer (Host is the balancer's). */
  readonly httpUrl: string;
  /** The target port each upgrade went to. */
  readonly routed: number[];
  /** Client connections open now that were routed to this target port. */
  openTo(port: number): number;
  close(): Promise<void>;
}

/** Resolves true when the port accepts a TCP connection, false when refused (or no answer in time). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe: Socket = connect(port, "127.0.0.1");
    const settle = (ok: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => settle(false), PROBE_TIMEOUT_MS);
    probe.once("connect", () => settle(true));
    probe.once("error", () => settle(false));
  });
}

async function startLoadBalancer(targetPorts: number[]): Promise<LoadBalancer> {
  const proxy = httpProxy.createProxyServer({ ws: true, xfwd: true });
  const routed: number[] = [];
  /** Each open client connection and the target it was routed to (null while being routed). */
  const clientSockets = new Map<Duplex, number | null>();
  let next = 0;

  async function pickTarget(): Promise<number | null> {
    // Every target once from this pick's own start: concurrent picks must not share the counter
    // while they wait for probes, or one could try a dead target twice and the live one never.
    const start = next++;
    for (let tried = 0; tried < targetPorts.length; tried++) {
      const port = targetPorts[(start + tried) % targetPorts.length] as number;
      if (await accepts(port)) return port;
    }
    return null;
  }

  const badGateway = (res: ServerResponse) => {
    if (res.headersSent) res.destroy();
    else res.writeHead(502, { "Content-Type": "text/plain", Connection: "close" }).end("Bad Gateway");
  };
  // Not counted in `routed`: that list is the sockets' routing, which the fault tests compare.
  const server: Server = createServer(async (req, res) => {
    const port = await pickTarget();
    if (port === null) badGateway(res);
    else proxy.web(req, res, { target: `http://127.0.0.1:${port}` }, () => badGateway(res));
  });
  server.on("upgrade", async (req, socket, head) => {
    clientSockets.set(socket, null);
    // Counted until either side ends: a client may never finish closing a connection whose
    // target died (http-proxy only half-closes it), and must not count as still routed there.
    const forget = () => clientSockets.delete(socket);
    socket.once("close", forget);
    socket.once("end", forget);
    socket.once("finish", () => {
      forget();
      setTimeout(() => socket.destroy(), HALF_CLOSED_GRACE_MS).unref();
    });
    socket.on("error", () => {});
    const port = await pickTarget();
    if (!clientSockets.has(socket)) return;
    if (port === null) {
      socket.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    routed.push(port);
    clientSockets.set(socket, port);
    // A target that dies between the probe and the proxied upgrade: http-proxy ends the client's
    // socket, and the client reconnects.
    proxy.ws(req, socket, head, { target: `http://127.0.0.1:${port}` }, () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    socketUrl: `ws://127.0.0.1:${port}${PROTOCOL_PATH}`,
    httpUrl: `http://127.0.0.1:${port}`,
    routed,
    openTo: (port) => [...clientSockets.values()].filter((target) => target === port).length,
    async close() {
      for (const socket of clientSockets.keys()) socket.destroy();
      server.closeAllConnections();
      proxy.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** startLoadBalancer, closed when the current test ends. */
export async function balancerForThisTest(targetPorts: number[]): Promise<LoadBalancer> {
  const balancer = await startLoadBalancer(targetPorts);
  cleanUpAfter(() => balancer.close());
  return balancer;
}
