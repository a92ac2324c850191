/** The machine a benchmark ran on, as every results file records it (each adds what else it measured with). */
import os from "node:os";

export function describeMachine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    node: process.version,
    totalMemoryBytes: os.totalmem(),
    platform: `${os.platform()} ${os.release()}`,
  };
}
