/** The ceiling: the same fan-out through a bare ws broadcast server (no database, no validation). */
import { Fleet } from "../fleet.ts";
import type { Plan } from "../plan.ts";
import { startBareServer } from "../service.ts";
import { type FanOutReport, fanOutLine, measureFanOut } from "./fanOut.ts";

export interface CeilingReport {
  server: string;
  fanOut: FanOutReport[];
}

export async function runBare(plan: Plan): Promise<CeilingReport> {
  const server = await startBareServer();
  const fleet = new Fleet(plan.generators);
  try {
    const fanOut: FanOutReport[] = [];
    await fleet.connect(server.socketUrl, Math.max(...plan.fanOutSizes));
    for (const size of plan.fanOutSizes) {
      await fleet.shrinkTo(size);
      for (const load of ["10/s", "saturation"] as const) {
        const report = await measureFanOut(fleet, server, null, load, plan.phaseMs);
        console.log(fanOutLine("bare ws", report));
        fanOut.push(report);
      }
    }
    return { server: "ws WebSocketServer, JSON serialised once per bid, socket.send to every client", fanOut };
  } finally {
    await fleet.stop();
    await server.stop();
  }
}
