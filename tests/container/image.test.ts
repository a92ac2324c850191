/**
 * The container image, built from the Dockerfile unchanged and run here (docs/testing.md, "Container").
 * podman (Debian's) builds it with chroot isolation on a stand-in for its base image
 * (harness/standInBase.ts), then the image's own filesystem runs as a container would run it
 * (harness/imageProcess.ts): as its user, with its Env, WorkingDir and Cmd, PID 1 of its namespace.
 * Checked: every PUBLIC_* build argument reaches the pages, the image's settings, no development
 * package inside, and on PGlite (a new, empty volume) and on PostgreSQL (DATABASE_URL): the pages, a
 * bid over the socket seen by a second socket, its HEALTHCHECK run inside, /metrics on its own port
 * only, and a SIGTERM drain (exit 0, logged), after which the HEALTHCHECK fails. Needs root (podman's
 * storage, unshare, chroot), podman and debootstrap: .ci/run installs them.
 */
import { existsSync } from "node:fs";
import { chown, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForOk } from "../../scripts/harness/childProcess.ts";
import { freePort } from "../../scripts/harness/ports.ts";
import { startPostgresCluster } from "../../scripts/harness/postgresCluster.ts";
import { CONTAINER_TEST_MS, scaled } from "../harness/timeBudgets.ts";
import { connectClient } from "../service/harness/auctionClient.ts";
import {
  type ImageConfig,
  type ImageProcess,
  imageUser,
  inspectImage,
  runInImage,
  startInImage,
} from "./harness/imageProcess.ts";
import { type Podman, privatePodman } from "./harness/podman.ts";
import { REPO, run } from "./harness/repository.ts";
import { importStandInBase } from "./harness/standInBase.ts";

const IMAGE = "localhost/nothing-store:container-test";
/** podman's own limit on the build, inside the hook's (CONTAINER_BUILD_MS). */
const BUILD_TIMEOUT_MS = scaled(15 * 60_000);
const START_TIMEOUT_MS = scaled(120_000);

const VIDEO_ORIGIN = "https://videos.nothing.example";
const VIDEO_IDS = {
  PUBLIC_VIDEO_PROMO: "promoVideo1",
  PUBLIC_VIDEO_WHEEL: "wheelVideo1",
  PUBLIC_VIDEO_FORTUNE: "fortuneVid1",
  PUBLIC_VIDEO_AUCTION: "auctionVid1",
  PUBLIC_VIDEO_CALCULATOR: "calcVideo01",
  PUBLIC_VIDEO_CAPTCHA: "captchaVid1",
  PUBLIC_VIDEO_REVIEWS: "reviewsVid1",
  PUBLIC_VIDEO_DONATION: "donationVi1",
};
/** A value for every PUBLIC_* setting the build reads (tests/unit/dockerfile.test.ts keeps the Dockerfile's list whole). */
const BUILD_SETTINGS = {
  PUBLIC_SITE_URL: "https://nothing.example",
  PUBLIC_REALTIME_URL: "wss://auction.nothing.example/realtime",
  PUBLIC_CONTRACT_ADDRESS: "ZNmintSetByTheContainerTest0000000000000000",
  PUBLIC_PAYMENT_ADDRESS: "ZNwalletSetByTheContainerTest00000000000000",
  PUBLIC_DONATION_ADDRESS: "ZNdonationSetByTheContainerTest000000000000",
  PUBLIC_NATIVE_COIN: "ETH",
  PUBLIC_COMMUNITY_URL: "https://chat.nothing.example/zn",
  PUBLIC_CHART_URL: "https://charts.nothing.example/zn?embed=1",
  PUBLIC_VIDEO_EMBED_ORIGIN: VIDEO_ORIGIN,
  ...VIDEO_IDS,
};
/**
 * The packages `npm ci --omit=dev --omit=optional` leaves out that a production install would keep:
 * TypeScript and a TextEncoder polyfill (optional peers of @solana/kit's packages; TypeScript of
 * valibot too), ws's optional native speed-ups and what they need. A new optional package of a runtime dependency shows up here, to be looked at.
 */
const OPTIONAL_LEFT_OUT = [
  "node_modules/bufferutil",
  "node_modules/fastestsmallesttextencoderdecoder",
  "node_modules/node-gyp-build",
  "node_modules/typescript",
  "node_modules/utf-8-validate",
];

let podman: Podman | undefined;
let rootfs = "";
let config: ImageConfig;
let buildLog = "";

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** podman's private storage, unshare and chroot need root: as another user the image is not built (CI is root). */
const asRoot = process.getuid?.() === 0;

beforeAll(async () => {
  if (!asRoot) {
    console.warn("test:container skips the image: building it needs root (podman's storage, unshare, chroot)");
    return;
  }
  for (const tool of ["podman", "debootstrap", "unshare", "chroot"]) {
    await run("sh", ["-c", `command -v ${tool}`]).catch(() => {
      throw new Error(`${tool} is missing: install Debian's podman and debootstrap (.ci/run does)`);
    });
  }
  podman = await privatePodman();
  let started = performance.now();
  const base = await importStandInBase(podman);
  const baseSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const buildArgs = Object.entries({ NODE_IMAGE: base, ...BUILD_SETTINGS }).flatMap(([key, value]) => [
    "--build-arg",
    `${key}=${value}`,
  ]);
  const { stdout, stderr } = await podman.run(
    ["build", "--isolation=chroot", "--pull=never", "--format", "docker", ...buildArgs, "-t", IMAGE, REPO],
    BUILD_TIMEOUT_MS,
  );
  buildLog = stdout + stderr;
  const buildSeconds = (performance.now() - started) / 1000;
  config = await inspectImage(podman, IMAGE);
  const baseSize = (await inspectImage(podman, base)).size;
  rootfs = (await podman.run(["image", "mount", IMAGE])).stdout.trim();
  console.log(
    `container: stand-in base in ${baseSeconds.toFixed(0)} s, image built in ${buildSeconds.toFixed(0)} s; ` +
      `image ${megabytes(config.size)} (base ${megabytes(baseSize)}, the rest ${megabytes(config.size - baseSize)})`,
  );
});

// Unmounting and removing the image and podman's storage took over 10 s on a busy machine.
afterAll(async () => {
  await podman?.destroy();
}, CONTAINER_TEST_MS);

describe.skipIf(!asRoot)("the container image", () => {
  it("builds with every PUBLIC_* build argument, and the pages carry them", async () => {
    // podman warns of a --build-arg no ARG takes; the build names settings left on placeholders.
    expect(buildLog).not.toContain("not consumed");
    expect(buildLog).not.toContain("placeholder values in use");
    const page = await readFile(join(rootfs, "app/dist/index.html"), "utf8");
    expect(page).toContain('<link rel="canonical" href="https://nothing.example/">');
    expect(page).toMatch(
      /<meta property="og:image" content="https:\/\/nothing\.example\/_astro\/share-image\.[^"]+\.png"/,
    );
    expect(page).not.toContain("localhost");
    expect(page).toContain(BUILD_SETTINGS.PUBLIC_DONATION_ADDRESS);
    expect(page).toContain("($ZN or ETH)");
    expect(page).toContain(`href="${BUILD_SETTINGS.PUBLIC_COMMUNITY_URL}"`);
    for (const id of Object.values(VIDEO_IDS)) expect(page).toContain(`${VIDEO_ORIGIN}/embed/${id}?`);
    const headers = await readFile(join(rootfs, "app/dist/_headers"), "utf8");
    expect(headers).toContain("wss://auction.nothing.example");
    expect(headers).toContain("https://charts.nothing.example");
  });

  it("is the image the Dockerfile describes: user node (uid 1000), /app, its Env, ports, volume and health check", async () => {
    expect(await imageUser(rootfs, config.user)).toEqual({ uid: 1000, gid: 1000 });
    expect(config.user).toBe("node");
    expect(config.workingDir).toBe("/app");
    expect(config.cmd).toEqual(["node", "service/main.ts"]);
    expect(config.env).toMatchObject({
      NODE_ENV: "production",
      HOST: "0.0.0.0",
      PORT: "4321",
      METRICS_HOST: "0.0.0.0",
      METRICS_PORT: "9464",
      STATIC_DIR: "/app/dist",
      DATA_DIR: "/data",
      SHUTDOWN_TIMEOUT_MS: "8000",
    });
    expect(config.exposedPorts.sort()).toEqual(["4321/tcp", "9464/tcp"]);
    expect(config.volumes).toEqual(["/data"]);
    expect(config.stopSignal).toBe("SIGTERM");
    expect(config.healthcheck.slice(0, 3)).toEqual(["CMD", "node", "-e"]);
    // The build's PGlite template, readable by the service's user (a first start copies it).
    const templates = await readdir(join(rootfs, "app/node_modules/.cache/nothing-store"));
    expect(templates).toEqual([expect.stringMatching(/^pglite-/)]);
  });

  it("holds the production dependencies and no development package", async () => {
    const lock = JSON.parse(await readFile(join(REPO, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean; optional?: boolean }>;
    };
    const entries = Object.entries(lock.packages).filter(([path]) => path !== "");
    const installed = new Set(
      entries.map(([path]) => path).filter((path) => existsSync(join(rootfs, "app", path, "package.json"))),
    );
    const development = entries.filter(([path, entry]) => installed.has(path) && (entry.dev || entry.devOptional));
    expect(development.map(([path]) => path)).toEqual([]);
    const required = entries.filter(([, entry]) => !entry.dev && !entry.devOptional && !entry.optional);
    expect(required.filter(([path]) => !installed.has(path)).map(([path]) => path)).toEqual([]);
    const leftOut = entries.filter(([path, entry]) => !entry.dev && !installed.has(path)).map(([path]) => path);
    expect(leftOut.sort()).toEqual(OPTIONAL_LEFT_OUT);
    // Nothing the lockfile does not name, either.
    const topLevel = await packageDirs(join(rootfs, "app/node_modules"));
    expect(topLevel.filter((path) => !installed.has(path))).toEqual([]);
    // The packages alone: .cache holds the build's PGlite template.
    const { stdout } = await run("du", ["-sb", "--exclude=.cache", join(rootfs, "app/node_modules")]);
    console.log(`container: /app/node_modules ${megabytes(Number(stdout.split("\t")[0]))}, ${installed.size} packages`);
  });

  it(
    "serves the pages and the auction on PGlite from a new volume, as its user, and drains on SIGTERM",
    async () => {
      const volume = await mkdtemp(join(tmpdir(), "nothing-volume-"));
      try {
        // A new named volume takes the ownership of the image's /data.
        const owner = await stat(join(rootfs, "data"));
        await chown(volume, owner.uid, owner.gid);
        const { service, env, port } = await startService({ volume });
        try {
          const status = await readFile(`/proc/${service.pid}/status`, "utf8");
          expect(status).toMatch(/^Uid:\t1000\t1000\t1000\t1000$/m);
          expect(status).toMatch(/^NSpid:\t\d+\t1$/m);
          const page = await fetch(`http://127.0.0.1:${port}/`);
          expect([page.status, await page.text()]).toEqual([200, expect.stringContaining("https://nothing.example/")]);
          expect(service.logs()).toContainEqual(
            expect.objectContaining({ msg: "new PGlite data directory", from: "template" }),
          );
          expect((await stat(join(volume, "PG_VERSION"))).uid).toBe(1000);
          await bidHealthAndDrain(service, env, port);
          expect(service.logs()).toContainEqual(expect.objectContaining({ backend: "pglite" }));
        } finally {
          await service.kill();
        }
      } finally {
        await rm(volume, { recursive: true, force: true });
      }
    },
    START_TIMEOUT_MS * 2,
  );

  it(
    "runs on PostgreSQL through DATABASE_URL, and drains on SIGTERM",
    async () => {
      const cluster = await startPostgresCluster();
      try {
        const { service, env, port } = await startService({ env: { DATABASE_URL: cluster.url } });
        try {
          await bidHealthAndDrain(service, env, port);
          expect(service.logs()).toContainEqual(expect.objectContaining({ backend: "postgres" }));
        } finally {
          await service.kill();
        }
      } finally {
        await cluster.destroy();
      }
    },
    START_TIMEOUT_MS * 2,
  );
});

/**
 * The image's Cmd with the image's Env, except loopback and free ports (the network is the
 * machine's: nothing is published, so nothing may collide), as `docker run -e` would set them.
 */
async function startService(options: { volume?: string; env?: Record<string, string> }) {
  const port = await freePort();
  const metricsPort = await freePort();
  const env = {
    HOST: "127.0.0.1",
    PORT: String(port),
    METRICS_HOST: "127.0.0.1",
    METRICS_PORT: String(metricsPort),
    ...options.env,
  };
  const service = await startInImage(rootfs, config, { volume: options.volume, env });
  try {
    await waitForOk(`http://127.0.0.1:${port}/readyz`, service.child, "the image's service", START_TIMEOUT_MS);
  } catch (error) {
    await service.kill();
    throw new Error(`${(error as Error).message}\n${service.stdout().slice(-3000)}\n${service.stderr().slice(-3000)}`);
  }
  return { service, env, port };
}

async function bidHealthAndDrain(service: ImageProcess, env: Record<string, string>, port: number) {
  const watcher = await connectClient(`ws://127.0.0.1:${port}/realtime`);
  const bidder = await connectClient(`ws://127.0.0.1:${port}/realtime`);
  await Promise.all([watcher.opening(), bidder.opening()]);
  expect(await bidder.bid("Nobody", 12.5)).toMatchObject({ type: "accepted", bid: { amountCents: 1250 } });
  expect(await watcher.waitForBroadcasts(1)).toEqual([expect.objectContaining({ bidderName: "Nobody" })]);

  const healthcheck = config.healthcheck.slice(1);
  expect(await runInImage(rootfs, config, healthcheck, env)).toMatchObject({ code: 0 });
  const metrics = await fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`);
  expect([metrics.status, await metrics.text()]).toEqual([200, expect.stringContaining("auction_open_sockets 2")]);
  expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);

  // As `docker stop` does: the stop signal to the container's PID 1.
  service.signal(config.stopSignal as NodeJS.Signals);
  expect(await Promise.all([watcher.closed, bidder.closed])).toEqual([
    expect.objectContaining({ code: 1001 }),
    expect.objectContaining({ code: 1001 }),
  ]);
  expect(await service.exited).toBe(0);
  expect(service.logs()).toContainEqual(expect.objectContaining({ msg: "shutting down", signal: "SIGTERM" }));
  expect(service.logs().at(-1)).toMatchObject({ msg: "stopped" });
  expect(await runInImage(rootfs, config, healthcheck, env)).toMatchObject({ code: 1 });
}

/** node_modules' package directories, one level deep and inside scopes, as lockfile paths. */
async function packageDirs(nodeModules: string): Promise<string[]> {
  const dirs: string[] = [];
  for (const entry of await readdir(nodeModules)) {
    if (entry.startsWith(".")) continue;
    if (entry.startsWith("@")) {
      for (const scoped of await readdir(join(nodeModules, entry))) dirs.push(`node_modules/${entry}/${scoped}`);
    } else {
      dirs.push(`node_modules/${entry}`);
    }
  }
  return dirs;
}
