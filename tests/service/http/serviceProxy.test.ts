/**
 * The service behind nginx (docs/deploying.md, "nginx in front of the service"): the documented
 * block, run under Debian's nginx on loopback ports in front of a real service process with
 * TRUST_PROXY=1. A socket opens and is answered through it, the console signs in through it, and
 * the same block passing `$host` (which drops the port) is refused with the hint naming the port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withTimeout } from "../../../scripts/harness/childProcess.ts";
import { freePort } from "../../../scripts/harness/ports.ts";
import { hashPassword } from "../../../service/console/password.ts";
import { connectClient } from "../harness/auctionClient.ts";
import { NGINX, nginxConfig, onLoopback } from "../harness/nginx.ts";
import { consoleState, cookieOf, PASSWORD, SESSION_SECRET, signInTo } from "../harness/operatorConsole.ts";
import { startServiceProcess } from "../harness/serviceProcess.ts";
import { cleanUpAfter, databaseForThisTest, waitFor } from "../harness/stores.ts";

/** Debian's nginx (`.ci/run` installs it), as staticHost.test.ts runs it. */

/** The docs' block for the service: the one with proxy_pass. */
async function documentedBlock(): Promise<string> {
  const docs = await readFile("docs/deploying.md", "utf8");
  const block = [...docs.matchAll(/```nginx\n([\s\S]*?)```/g)]
    .map((match) => match[1] as string)
    .find((text) => text.includes("proxy_pass"));
  if (!block) throw new Error("docs/deploying.md has no nginx block with proxy_pass");
  return block;
}

/** Runs nginx with `servers` (and the block's map) in its http block until the test ends. */
async function runNginx(http: string, probePort: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "nothing-nginx-proxy-"));
  const config = join(dir, "nginx.conf");
  await writeFile(config, nginxConfig(dir, [http]));
  const nginx: ChildProcess = spawn(NGINX, ["-p", dir, "-c", config], { stdio: ["ignore", "inherit", "inherit"] });
  cleanUpAfter(async () => {
    nginx.kill("SIGTERM");
    if (nginx.exitCode === null) await withTimeout(once(nginx, "exit"), 10_000, "nginx stopping");
    await rm(dir, { recursive: true, force: true });
  });
  await waitFor("nginx answering", () =>
    fetch(`http://127.0.0.1:${probePort}/healthz`).then(
      (answer) => answer.status === 200,
      () => false,
    ),
  );
}

describe.skipIf(!existsSync(NGINX))("the service behind the nginx block of docs/deploying.md", () => {
  it("upgrades a socket, signs the operator in with TRUST_PROXY=1, and names the port when $host drops it", async () => {
    const database = await databaseForThisTest();
    const service = await startServiceProcess({
      databaseUrl: database.url,
      env: {
        TRUST_PROXY: "1",
        // The production cost: the service refuses less. One sign-in checks it.
        ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD),
        ADMIN_SESSION_SECRET: SESSION_SECRET,
      },
    });
    cleanUpAfter(() => service.stop());

    const [port, hostPort] = [await freePort(), await freePort()];
    const block = onLoopback(await documentedBlock(), port).replace(
      "proxy_pass http://127.0.0.1:4321;",
      `proxy_pass http://127.0.0.1:${service.port};`,
    );
    // The same server but for `$host`, which drops the port the browser used.
    const server = block.slice(block.indexOf("server {"));
    expect(server).toContain("proxy_set_header Host $http_host;");
    const withHost = server
      .replace(`listen 127.0.0.1:${port};`, `listen 127.0.0.1:${hostPort};`)
      .replace("proxy_set_header Host $http_host;", "proxy_set_header Host $host;");
    await runNginx(`${block}\n${withHost}`, port);
    const proxied = `http://127.0.0.1:${port}`;

    // The socket: upgraded through nginx, given its snapshot, and a bid answered.
    const client = await connectClient(`ws://127.0.0.1:${port}/realtime`);
    cleanUpAfter(() => client.close());
    expect((await client.opening()).type).toBe("snapshot");
    expect((await client.bid("Through the proxy", 5)).type).toBe("accepted");

    // The console: the form's Origin is nginx's, port included, and so is the Host it passes on.
    const signedIn = await signInTo(proxied, PASSWORD);
    expect(signedIn.status).toBe(303);
    expect(await consoleState(proxied, cookieOf(signedIn))).toBe("console");
    await waitFor("the sign-in logged", () => service.logs.some((line) => line.msg === "operator signed in"));

    // `$host` on a port of its own: the Host loses the port, the Origin keeps it, 403 with the hint.
    const throughHost = `http://127.0.0.1:${hostPort}`;
    expect((await signInTo(throughHost, PASSWORD)).status).toBe(403);
    await waitFor("the refusal logged", () =>
      service.logs.some((line) => String(line.msg).startsWith("refused a console form")),
    );
    expect(service.logs.filter((line) => String(line.msg).startsWith("refused a console form"))).toEqual([
      expect.objectContaining({
        level: 40,
        origin: throughHost,
        expected: "http://127.0.0.1",
        path: "/admin/login",
        msg: "refused a console form whose Origin differs from the Host only by its port: a proxy in front must pass the Host the browser sent, port included (nginx: proxy_set_header Host $http_host)",
      }),
    ]);
  }, 60_000);
});
