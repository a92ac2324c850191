/**
 * One subscriber cannot keep strangers out of the console (docs/decisions/2026-11-28-fair-sign-in-
 * turns.md), tried from real addresses against the real service process at the production cost
 * (one check slot on 2 cores): 100 /64s of one IPv6 /48 guess at once, each trying again whenever
 * it is told the checks are busy, while a stranger elsewhere signs in. Before, the /48's failures
 * were 100 clients' (5 each) and filled the console's 20, and its checks held the one slot: the
 * stranger got 503. The /48 is routed to loopback, as root (harness/subscriberNetwork.ts).
 */
import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { hashPassword } from "../../../service/console/password.ts";
import { PASSWORD, SESSION_SECRET } from "../harness/operatorConsole.ts";
import { startServiceProcess } from "../harness/serviceProcess.ts";
import { BACKENDS, createTestLocation } from "../harness/stores.ts";
import { subscriberAddress, subscriberNetwork } from "../harness/subscriberNetwork.ts";

const SUBSCRIBER = "2001:db8:4801";
const subscriber = subscriberNetwork(SUBSCRIBER, import.meta.url);
const SUBNETS = 100;
/** The /48's failures in 15 minutes (service/console/signInLimits.ts). */
const NETWORK_FAILURES = 20;

beforeAll(subscriber.route);
afterAll(subscriber.unroute);

/** A sign-in posted from `localAddress`, with the console's own Origin: its status. */
function signInFrom(port: number, localAddress: string, password: string): Promise<{ status: number }> {
  const host = localAddress.includes(":") ? `[::1]:${port}` : `127.0.0.1:${port}`;
  const body = new URLSearchParams({ password }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: localAddress.includes(":") ? "::1" : "127.0.0.1",
        port,
        path: "/admin/login",
        method: "POST",
        localAddress,
        agent: false,
        headers: {
          Origin: `http://${host}`,
          "Content-Type": "application/x-www-form-urlencoded",
          "Content-Length": Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error("no answer in 30 s")));
    req.on("error", reject);
    req.end(body);
  });
}

async function metric(metricsUrl: string, line: RegExp): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(new RegExp(`^${line.source} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
}

describe.skipIf(!subscriber.available).each(BACKENDS)("sign-ins from one subscriber's /48, on %s", (backend) => {
  it("while 100 /64s of one /48 guess, strangers over IPv4 and IPv6 sign in at once: the /48 gets 20 checks", async () => {
    const location = await createTestLocation(backend);
    onTestFinished(() => location.remove());
    const service = await startServiceProcess({
      databaseUrl: location.databaseUrl ?? "",
      dataDir: location.dataDir,
      env: {
        HOST: "::",
        // The production cost and slots: what the subscriber keeps busy is what is tested.
        ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD),
        ADMIN_SESSION_SECRET: SESSION_SECRET,
      },
    });
    onTestFinished(() => service.stop());
    const { port, metricsUrl } = service;
    expect((await signInFrom(port, "127.0.0.2", PASSWORD)).status).toBe(303);

    let flooding = true;
    const guess = async (subnet: number) => {
      for (;;) {
        const address = subscriberAddress(SUBSCRIBER, subnet);
        // 0: the service went away (the test failed and stopped it).
        const { status } = await signInFrom(port, address, `wrong guess ${subnet}`).catch(() => ({ status: 0 }));
        // Busy: the /48 has a check in flight already. Straight back, as an attacker would.
        if (status !== 503) return status;
        await sleep(20);
      }
    };
    const flood = Promise.all(Array.from({ length: SUBNETS }, (_, subnet) => guess(subnet))).finally(() => {
      flooding = false;
    });

    // Mid-flood: the stranger waits for the check in flight at most, then has the next slot.
    await sleep(500);
    const during = await signInFrom(port, "127.0.0.1", PASSWORD);
    expect(flooding).toBe(true);
    expect(during.status).toBe(303);

    const statuses = await flood;
    expect(statuses.filter((status) => status === 401)).toHaveLength(NETWORK_FAILURES);
    expect(statuses.filter((status) => status === 429)).toHaveLength(SUBNETS - NETWORK_FAILURES);
    // Its 20 failures count 5 toward the console's turn: no one is held back. A held attempt waits
    // a second at least, in admin_sign_ins_held, read here every 100 ms while the sign-in runs.
    let answered = false;
    const signedIn = signInFrom(port, "::1", PASSWORD).finally(() => {
      answered = true;
    });
    const heldSeen: number[] = [];
    while (!answered) {
      heldSeen.push(await metric(metricsUrl, /admin_sign_ins_held/));
      await sleep(100);
    }
    expect((await signedIn).status).toBe(303);
    expect(heldSeen.filter((held) => held > 0)).toEqual([]);
    expect(await metric(metricsUrl, /admin_sign_ins_refused_total\{reason="throttled"\}/)).toBe(0);
    expect(await metric(metricsUrl, /admin_login_failures_total/)).toBe(NETWORK_FAILURES);
    // The /48 from a /64 it has not used: refused with its network.
    expect((await signInFrom(port, subscriberAddress(SUBSCRIBER, 200), PASSWORD)).status).toBe(429);
  });
});
