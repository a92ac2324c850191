/**
 * The ceiling (DESIGN.md 6c): the same saturated fan-out through a bare ws broadcast server (no
 * database, no validation, one prebuilt frame written to every socket as the service writes it).
 * The server and its own fleet live through the whole run, so that each of the service's saturated
 * fan-out phases is followed at once by the bare one at the same size: on a shared machine, a
 * ratio of two phases minutes apart would compare two machines.
 */
import { Fleet } from "../fleet.ts";
import type { Plan } from "../plan.ts";
import { type Service, startBareServer } from "../service.ts";
import { type FanOutReport, fanOutLine, measureFanOut } from "./fanOut.ts";

export const BARE_SERVER_DESCRIPTION =
  "ws WebSocketServer, each bid serialised and framed once, the frame written to every open socket's TCP socket";

export interface Ceiling {
  /** The bare server's saturated fan-out to `sockets` receiving sockets, measured now. */
  measure(sockets: number): Promise<FanOutReport>;
  stop(): Promise<void>;
}

export async function startCeiling(plan: Plan): Promise<Ceiling> {
  const server: Service = await startBareServer();
  const fleet = new Fleet(plan.generators);
  let connected = 0;
  return {
    async measure(sockets) {
      // Connected once, to the largest size, then shrunk as the service's fleet is.
      if (connected === 0) {
        await fleet.connect(server.socketUrl, Math.max(...plan.fanOutSizes));
        connected = Math.max(...plan.fanOutSizes);
      }
      if (sockets < connected) await fleet.shrinkTo(sockets);
      if (sockets > connected) await fleet.connect(server.socketUrl, sockets - connected);
      connected = sockets;
      const report = await measureFanOut(fleet, server, null, "saturation", plan.phaseMs);
      console.log(fanOutLine("bare ws", report));
      return report;
    },
    async stop() {
      await fleet.stop();
      await server.stop();
    },
  };
}
