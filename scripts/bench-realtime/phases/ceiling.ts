/**
 * The ceiling (docs/design.md#6c): the same saturated fan-out through a bare ws broadcast server (no
 * database, no validation, one prebuilt frame written to every socket as the service writes it).
 * The server and its own fleet live through the whole run, so that each of the service's saturated
 * fan-out phases is followed at once by the bare one at the same size: on a shared machine, a
 * ratio of two phases minutes apart would compare two machines.
 *
 * A second bare server writes the frames of one turn of the event loop as one write per socket,
 * as the service does since group commit (coalescedWrites.ts): reported beside the first, for
 * information, since docs/design.md#6c's bar is judged against one write per frame.
 */
import { Fleet } from "../fleet.ts";
import type { Plan } from "../plan.ts";
import { type Service, startBareServer } from "../service.ts";
import { type FanOutReport, fanOutLine, measureFanOut } from "./fanOut.ts";

export const BARE_SERVER_DESCRIPTION =
  "ws WebSocketServer, each bid serialised and framed once, the frame written to every open socket's TCP socket";
export const COALESCED_BARE_SERVER_DESCRIPTION = `${BARE_SERVER_DESCRIPTION}; the frames of one turn of the event loop leave each socket as one write (corked until setImmediate)`;

export interface Ceiling {
  /** The bare servers' saturated fan-out to `sockets` receiving sockets, measured now, one after the other. */
  measure(sockets: number): Promise<{ perFrame: FanOutReport; coalesced: FanOutReport }>;
  stop(): Promise<void>;
}

export async function startCeiling(plan: Plan): Promise<Ceiling> {
  const perFrame = await startBareCeiling(plan, false);
  const coalesced = await startBareCeiling(plan, true).catch(async (error: unknown) => {
    await perFrame.stop();
    throw error;
  });
  return {
    async measure(sockets) {
      return { perFrame: await perFrame.measure(sockets), coalesced: await coalesced.measure(sockets) };
    },
    async stop() {
      await Promise.all([perFrame.stop(), coalesced.stop()]);
    },
  };
}

async function startBareCeiling(plan: Plan, coalesced: boolean) {
  const server: Service = await startBareServer(coalesced);
  const fleet = new Fleet(plan.generators);
  const name = coalesced ? "bare ws, coalesced writes," : "bare ws";
  let connected = 0;
  return {
    async measure(sockets: number): Promise<FanOutReport> {
      // Connected once, to the largest size, then shrunk as the service's fleet is.
      if (connected === 0) {
        await fleet.connect(server.socketUrl, Math.max(...plan.fanOutSizes));
        connected = Math.max(...plan.fanOutSizes);
      }
      if (sockets < connected) await fleet.shrinkTo(sockets);
      if (sockets > connected) await fleet.connect(server.socketUrl, sockets - connected);
      connected = sockets;
      const report = await measureFanOut(fleet, server, null, "saturation", plan.phaseMs);
      console.log(fanOutLine(name, report));
      return report;
    },
    async stop() {
      await fleet.stop();
      await server.stop();
    },
  };
}
