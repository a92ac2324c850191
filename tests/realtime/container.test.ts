/**
 * No Docker engine runs here, so this runs what the Dockerfile's final image would: its COPY list
 * laid out in a temp directory (the sources only, nothing else of the repository), its ENV, its
 * CMD, then its HEALTHCHECK command against the running service, /metrics on the metrics
 * listener's port (not the public one), then a SIGTERM.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { killChild } from "../../scripts/support/childProcess.ts";
import { freePort } from "../../scripts/support/ports.ts";
import { cleanUpAfter, dataDirForThisTest } from "./support/stores.ts";

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../..");

interface FinalStage {
  /** Paths copied from the build context, as [source, destination relative to WORKDIR]. */
  copies: [string, string][];
  env: Record<string, string>;
  cmd: string[];
  healthcheck: string[];
  /** The EXPOSE ports. */
  exposed: string[];
  workdir: string;
}

/** The final stage of the Dockerfile: its instructions after the last FROM, continuation lines joined. */
function readFinalStage(dockerfile: string): FinalStage {
  const instructions = dockerfile
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const lastFrom = instructions.findLastIndex((line) => line.startsWith("FROM "));
  const stage: FinalStage = { copies: [], env: {}, cmd: [], healthcheck: [], exposed: [], workdir: "/" };
  for (const line of instructions.slice(lastFrom + 1)) {
    const [keyword = "", ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    if (keyword === "WORKDIR") stage.workdir = args;
    if (keyword === "COPY" && !args.startsWith("--from")) {
      const [source = "", destination = ""] = args.split(/\s+/);
      stage.copies.push([source, destination]);
    }
    if (keyword === "ENV") {
      for (const match of args.matchAll(/(\w+)=(\S*)/g)) stage.env[match[1] as string] = match[2] as string;
    }
    if (keyword === "CMD") stage.cmd = JSON.parse(args);
    if (keyword === "EXPOSE") stage.exposed.push(...rest);
    if (keyword === "HEALTHCHECK") stage.healthcheck = JSON.parse(args.slice(args.indexOf("CMD ") + 4));
  }
  return stage;
}

function waitForListening(child: ChildProcess): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error("the service did not start in time")), 60_000);
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (line.includes("The Nothing Store is open")) {
        clearTimeout(timer);
        resolvePromise();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code}: ${stderr}`));
    });
  });
}

describe("container image", () => {
  it("runs the service from the files the Dockerfile copies, with its CMD, and passes its HEALTHCHECK", async () => {
    const stage = readFinalStage(await readFile(join(REPO, "Dockerfile"), "utf8"));
    expect(stage.workdir).toBe("/app");
    expect(stage.cmd).toEqual(["node", "realtime/main.ts"]);
    expect(stage.env).toMatchObject({ HOST: "0.0.0.0", STATIC_DIR: "/app/dist", DATA_DIR: "/data" });
    // /metrics listens on every interface of the container, for a Prometheus on its network
    // (docs/design.md#9); what is published stays the operator's choice.
    expect(stage.env).toMatchObject({ PORT: "4321", METRICS_HOST: "0.0.0.0", METRICS_PORT: "9464" });
    expect(stage.exposed).toEqual(["4321", "9464"]);

    const app = await mkdtemp(join(tmpdir(), "nothing-image-"));
    cleanUpAfter(() => rm(app, { recursive: true, force: true }));
    for (const [source, destination] of stage.copies) {
      // As in Docker: a destination ending in "/" is a directory to copy into.
      const target = destination.endsWith("/") ? join(app, destination, basename(source)) : join(app, destination);
      await cp(join(REPO, source), target, { recursive: true });
    }
    // The other stages' output: production node_modules and the built site.
    await symlink(join(REPO, "node_modules"), join(app, "node_modules"));
    await mkdir(join(app, "dist"));
    await writeFile(join(app, "dist", "index.html"), "<!doctype html><title>The Nothing Store</title>");
    await writeFile(join(app, "dist", "404.html"), "<!doctype html><h1>Oops! Page not found</h1>");
    const data = await dataDirForThisTest();

    const port = await freePort();
    const metricsPort = await freePort();
    // The image's environment, except loopback instead of 0.0.0.0, free ports and temp paths instead of /app and /data.
    const env = {
      PATH: process.env.PATH,
      ...stage.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: String(metricsPort),
      STATIC_DIR: join(app, "dist"),
      DATA_DIR: data.dir,
    };
    const [command, ...args] = stage.cmd;
    expect(command).toBe("node");
    const child = spawn(process.execPath, args, { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolveExit) => child.once("exit", resolveExit));
    cleanUpAfter(() => killChild(child));
    await waitForListening(child);

    const [healthCommand, ...healthArgs] = stage.healthcheck;
    expect(healthCommand).toBe("node");
    await expect(run(process.execPath, healthArgs, { env, timeout: 30_000 })).resolves.toBeDefined();
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toContain("The Nothing Store");
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect([metrics.status, await metrics.text()]).toEqual([200, expect.stringContaining("auction_open_sockets 0")]);
    const publicMetrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect([publicMetrics.status, await publicMetrics.text()]).toEqual([
      404,
      expect.stringContaining("Page not found"),
    ]);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    // With the service gone the same HEALTHCHECK fails.
    await expect(run(process.execPath, healthArgs, { env, timeout: 30_000 })).rejects.toMatchObject({ code: 1 });
  }, 120_000);
});
