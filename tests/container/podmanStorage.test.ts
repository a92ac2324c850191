/**
 * The container test's private podman storage (harness/podman.ts) goes in every outcome: destroy(),
 * which afterAll calls after a pass, a failure or a hook that timed out, first ends any podman
 * command still running (a build the timeout left behind), then removes the storage whole.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { run } from "../../scripts/harness/childProcess.ts";
import { privatePodman } from "./harness/podman.ts";

/** The podman processes using `dir` as their storage. */
async function podmansOn(dir: string): Promise<string[]> {
  const { stdout } = await run("ps", ["-eo", "pid=,args="]);
  return stdout.split("\n").filter((line) => line.includes("podman") && line.includes(dir));
}

it.skipIf(process.getuid?.() !== 0)(
  "ends a command still running, then leaves no storage, mount or process behind",
  async () => {
    const podman = await privatePodman();
    expect(await readFile(`${podman.dir}/owner.pid`, "utf8")).toBe(String(process.pid));
    // `podman events` streams until it is stopped: a stand-in for a build whose hook timed out.
    const hanging = podman.run(["events"], 600_000);
    await expect.poll(() => podmansOn(podman.dir), { timeout: 10_000 }).toHaveLength(1);
    await podman.destroy();
    await expect(hanging).rejects.toThrow("podman events failed");
    expect(existsSync(podman.dir)).toBe(false);
    expect(await podmansOn(podman.dir)).toEqual([]);
    expect(await readFile("/proc/self/mountinfo", "utf8")).not.toContain(podman.dir);
  },
);
