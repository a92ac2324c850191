/**
 * A TCP relay that can cut its connections the way a dead network path does: both directions stop
 * flowing, and neither side gets a FIN, an RST or a WebSocket close frame. Only heartbeats notice.
 *
 *   const relay = await startCuttableProxy(service.port);
 *   // connect to ws://127.0.0.1:<relay.port>/realtime
 *   relay.cutAll();   // every connection open now goes silent; new ones flow normally
 *   relay.goDown();   // cuts them all and refuses new ones until relay.comeBack()
 *   await relay.close();
 */
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

export interface CuttableProxy {
  readonly port: number;
  /** Connections relayed and not yet ended. */
  readonly openConnections: number;
  /** Silences every open connection; returns how many. */
  cutAll(): number;
  /** Cuts every open connection and refuses new ones (reset at once, as an unreachable host would fail). */
  goDown(): void;
  /** Lets new connections through again. */
  comeBack(): void;
  close(): Promise<void>;
}

interface Relay {
  client: Socket;
  upstream: Socket;
  cut: boolean;
}

export async function startCuttableProxy(targetPort: number): Promise<CuttableProxy> {
  const relays = new Set<Relay>();
  let down = false;

  function forward(relay: Relay, from: Socket, to: Socket) {
    from.on("data", (chunk) => {
      if (!relay.cut) to.write(chunk);
    });
    // A cut connection keeps both sockets open: a FIN would tell the peer the truth.
    from.on("end", () => {
      if (!relay.cut) to.end();
    });
    from.on("close", () => {
      if (relay.cut) return;
      to.destroy();
      relays.delete(relay);
    });
    from.on("error", () => {});
  }

  const server = createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, "127.0.0.1");
    const relay: Relay = { client, upstream, cut: false };
    relays.add(relay);
    forward(relay, client, upstream);
    forward(relay, upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  function cutAll() {
    let count = 0;
    for (const relay of relays) {
      if (relay.cut) continue;
      relay.cut = true;
      count += 1;
    }
    return count;
  }

  return {
    port: (server.address() as AddressInfo).port,
    get openConnections() {
      return [...relays].filter((relay) => !relay.cut).length;
    },
    cutAll,
    goDown() {
      down = true;
      cutAll();
    },
    comeBack() {
      down = false;
    },
    async close() {
      for (const relay of relays) {
        relay.client.destroy();
        relay.upstream.destroy();
      }
      relays.clear();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
