/**
 * A subscriber's IPv6 /48 on this machine, for tests that need real clients from many /64s of one
 * network (the fair shares, docs/decisions/2026-11-28-fair-shares-that-nest.md): the /48 is routed
 * to loopback and bound without being assigned (`ip -6 route add local …/48 dev lo`,
 * net.ipv6.ip_nonlocal_bind), which needs root. Every 127.x.y.z address is loopback, so IPv4
 * networks need nothing. Each test file takes a /48 of its own, since files run side by side.
 *
 *   const subscriber = subscriberNetwork("2001:db8:4800", import.meta.url); // warns unless root
 *   beforeAll(subscriber.route); afterAll(subscriber.unroute);
 *   describe.skipIf(!subscriber.available)(…)
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "../../../scripts/harness/childProcess.ts";

const NONLOCAL_BIND = "/proc/sys/net/ipv6/ip_nonlocal_bind";
/** The setting as it was before the first file routed a /48, for the last one to put back. */
const NONLOCAL_BIND_BEFORE = join(tmpdir(), "nothing-test-ip-nonlocal-bind-before");
/** Every /48 these tests route, so that the last file to finish knows it is the last. */
const SUBSCRIBERS = /^local 2001:db8:48[0-9a-f]{2}::\/48 /m;

/** The address `host` of the /64 numbered `n` of `network`, each /64 in a /56 of its own, so that the /48's share binds. */
export const subscriberAddress = (network: string, n: number, host = 1) =>
  `${network}:${(n * 256).toString(16)}::${host.toString(16)}`;

/** `network`: the /48 without its "::/48", one of 2001:db8:4800 to 2001:db8:48ff. */
export function subscriberNetwork(network: string, testFile: string) {
  const available = process.getuid?.() === 0;
  if (!available) {
    const file = relative(process.cwd(), fileURLToPath(testFile));
    console.warn(`${file}: skipping the tests from a subscriber's /48 (${network}::/48): routing it needs root`);
  }
  let routed = false;
  const localRoutes = async () => (await run("ip", ["-6", "route", "show", "table", "local", "type", "local"])).stdout;
  return {
    available,
    async route() {
      if (!available) return;
      await run("ip", ["-6", "route", "replace", "local", `${network}::/48`, "dev", "lo"]);
      routed = true;
      const before = (await readFile(NONLOCAL_BIND, "utf8")).trim();
      await writeFile(NONLOCAL_BIND_BEFORE, before, { flag: "wx" }).catch(() => {});
      await writeFile(NONLOCAL_BIND, "1");
    },
    async unroute() {
      if (!routed) return;
      routed = false;
      await run("ip", ["-6", "route", "del", "local", `${network}::/48`, "dev", "lo"]).catch(() => {});
      if (SUBSCRIBERS.test(await localRoutes())) return;
      const before = await readFile(NONLOCAL_BIND_BEFORE, "utf8").catch(() => null);
      if (before !== null) await writeFile(NONLOCAL_BIND, before);
      await rm(NONLOCAL_BIND_BEFORE, { force: true });
    },
  };
}
