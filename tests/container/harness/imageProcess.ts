/**
 * Runs an image as a container runtime would, without one (`podman run` needs cgroups that crun
 * cannot have in this machine's hybrid mode): the image's root filesystem as `podman image mount`
 * gives it (read-only), in a mount and PID namespace of their own (`unshare`), with /proc, /dev, a
 * tmpfs /tmp and a writable directory on the image's volume bound in, entered with `chroot` as the
 * image's user, with its Env (plus the test's, as `docker run -e` adds them), WorkingDir,
 * Entrypoint and Cmd. The first process is PID 1 of its namespace, as in a container: a signal
 * reaches it only if it handles that signal. docs/testing.md says what still differs.
 *
 *   const config = await inspectImage(podman, "localhost/nothing-store:test");
 *   const service = await startInImage(rootfs, config, { volume: dataDir, env: { PORT: "45000" } });
 *   service.signal("SIGTERM"); await service.exited;      // the exit code
 *   const { code } = await runInImage(rootfs, config, ["node", "-e", "..."]);
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { withTimeout } from "../../../scripts/harness/childProcess.ts";
import type { Podman } from "./podman.ts";

/** What `podman image inspect` says about an image, the parts a runtime uses. */
export interface ImageConfig {
  user: string;
  env: Record<string, string>;
  workingDir: string;
  entrypoint: string[];
  cmd: string[];
  /** The HEALTHCHECK's test, e.g. ["CMD", "node", "-e", "..."]. */
  healthcheck: string[];
  stopSignal: string;
  exposedPorts: string[];
  volumes: string[];
  /** Bytes, as `podman images` counts them (the layers, uncompressed). */
  size: number;
}

export async function inspectImage(podman: Podman, name: string): Promise<ImageConfig> {
  const { stdout } = await podman.run(["image", "inspect", name]);
  const [image] = JSON.parse(stdout);
  const config = image.Config ?? {};
  return {
    user: config.User ?? "",
    env: Object.fromEntries(
      (config.Env ?? []).map((pair: string) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
    ),
    workingDir: config.WorkingDir || "/",
    entrypoint: config.Entrypoint ?? [],
    cmd: config.Cmd ?? [],
    healthcheck: image.Healthcheck?.Test ?? config.Healthcheck?.Test ?? [],
    stopSignal: config.StopSignal ?? "",
    exposedPorts: Object.keys(config.ExposedPorts ?? {}),
    volumes: Object.keys(config.Volumes ?? {}),
    size: image.Size,
  };
}

/** The user's uid and gid from the image's own /etc/passwd, as a runtime resolves USER. */
export async function imageUser(rootfs: string, user: string): Promise<{ uid: number; gid: number }> {
  const [name = "", group] = user.split(":");
  if (/^\d+$/.test(name)) return { uid: Number(name), gid: Number(group ?? name) };
  const entry = (await readFile(join(rootfs, "etc/passwd"), "utf8"))
    .split("\n")
    .map((line) => line.split(":"))
    .find((fields) => fields[0] === name);
  if (!entry) throw new Error(`the image's /etc/passwd has no user ${name}`);
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

export interface ImageProcess {
  /** The host's PID of the image's first process (PID 1 in its namespace). */
  readonly pid: number;
  readonly child: ChildProcess;
  /** Its exit code (unshare passes it on), once its output is all read. */
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Its standard output's JSON lines, parsed; other lines as { msg }. */
  logs(): Record<string, unknown>[];
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL if still running (the namespace goes with its PID 1), then wait for the exit. */
  kill(): Promise<void>;
}

export interface StartOptions {
  /** A host directory bound on the image's first VOLUME, writable. */
  volume?: string;
  /** Added to the image's Env, or replacing its values, as `docker run -e`. */
  env?: Record<string, string>;
  /** Instead of Entrypoint and Cmd, as `docker exec` or a HEALTHCHECK runs a command. */
  command?: string[];
}

// Runs in the new namespaces, on the host's filesystem, before entering the image's.
const ENTER = `set -e
root=$1; volume=$2; target=$3; user=$4; shift 4
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
if [ -n "$volume" ]; then mount --bind "$volume" "$root$target"; fi
exec chroot --userspec="$user" "$root" "$@"`;

const PID_TIMEOUT_MS = 10_000;

export async function startInImage(
  rootfs: string,
  config: ImageConfig,
  options: StartOptions = {},
): Promise<ImageProcess> {
  const { uid, gid } = await imageUser(rootfs, config.user);
  const env = Object.entries({ ...config.env, ...options.env }).map(([key, value]) => `${key}=${value}`);
  const command = options.command ?? [...config.entrypoint, ...config.cmd];
  if (command.length === 0) throw new Error("no command to run: the image has no Entrypoint or Cmd");
  const target = config.volumes[0] ?? "";
  if (options.volume && !target) throw new Error("the image declares no VOLUME to bind the directory on");
  const child = spawn(
    "unshare",
    [
      "--mount",
      "--pid",
      "--fork",
      "--kill-child",
      "sh",
      "-c",
      ENTER,
      "enter",
      rootfs,
      options.volume ?? "",
      target,
      `${uid}:${gid}`,
      // env -i: only the image's environment, none of the test's; -C: the image's WorkingDir.
      "/usr/bin/env",
      "-i",
      "-C",
      config.workingDir,
      ...env,
      ...command,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const pid = await firstChild(child);
  return {
    pid,
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    logs: () =>
      stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>;
          } catch {
            return { msg: line };
          }
        }),
    signal: (signal) => process.kill(pid, signal),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await exited;
    },
  };
}

/**
 * Runs `command` in the image to its end, with its environment and `env` (a namespace of its own,
 * the network shared, as a HEALTHCHECK runs beside the service): its code and output.
 */
export async function runInImage(
  rootfs: string,
  config: ImageConfig,
  command: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const started = await startInImage(rootfs, config, { command, env });
  try {
    const code = await withTimeout(started.exited, timeoutMs, command.join(" "));
    return { code, stdout: started.stdout(), stderr: started.stderr() };
  } finally {
    await started.kill();
  }
}

/** The PID of unshare's forked child: the process that becomes the image's first. */
async function firstChild(child: ChildProcess): Promise<number> {
  const deadline = Date.now() + PID_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`unshare exited with ${child.exitCode}`);
    const children = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").catch(() => "");
    const [pid] = children.trim().split(/\s+/).filter(Boolean).map(Number);
    if (pid) return pid;
    await sleep(20);
  }
  child.kill("SIGKILL");
  throw new Error(`unshare forked no child within ${PID_TIMEOUT_MS / 1000} s`);
}
