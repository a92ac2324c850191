/**
 * Every nginx block in the docs passes `nginx -t` as written: an operator pastes it into `http {}`
 * and changes only the paths of the certificate, its key and the headers file, which this test
 * points at files of its own (a certificate openssl makes for the test). The other tests run the
 * blocks on loopback ports without TLS (staticHost.test.ts, serviceProxy.test.ts).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NGINX, nginxConfig } from "../harness/nginx.ts";

const run = promisify(execFile);

async function documentedBlocks(): Promise<{ file: string; block: string }[]> {
  const files = (await readdir("docs")).filter((name) => name.endsWith(".md"));
  const blocks: { file: string; block: string }[] = [];
  for (const file of files) {
    const text = await readFile(join("docs", file), "utf8");
    for (const match of text.matchAll(/```nginx\n([\s\S]*?)```/g)) blocks.push({ file, block: match[1] as string });
  }
  return blocks;
}

describe("the documented nginx blocks", () => {
  let dir: string;
  let blocks: { file: string; block: string }[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "nothing-nginx-t-"));
    blocks = await documentedBlocks();
    await run("openssl", [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=nothing.example"],
      ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
    ]);
    await writeFile(join(dir, "headers.conf"), 'add_header X-Content-Type-Options "nosniff" always;\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("are found: the static host's and the proxy's, each with TLS", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const { file, block } of blocks.filter(({ block }) => block.includes("listen 443 ssl;"))) {
      expect(block, file).toMatch(/^\s*ssl_certificate \S+;$/m);
      expect(block, file).toMatch(/^\s*ssl_certificate_key \S+;$/m);
    }
  });

  it("each pass nginx -t as written, but for the certificate's and headers' paths", async () => {
    for (const [index, { file, block }] of blocks.entries()) {
      const adapted = block
        .replace(/^(\s*ssl_certificate) \S+;$/gm, `$1 ${join(dir, "cert.pem")};`)
        .replace(/^(\s*ssl_certificate_key) \S+;$/gm, `$1 ${join(dir, "key.pem")};`)
        .replaceAll("/etc/nginx/nothing-store-headers.conf", join(dir, "headers.conf"));
      const config = join(dir, `block-${index}.conf`);
      await writeFile(config, nginxConfig(dir, ["    include /etc/nginx/mime.types;", adapted]));
      // nginx -t parses, loads the certificates and checks, without binding port 443.
      const checked = await run(NGINX, ["-t", "-p", dir, "-c", config]).then(
        ({ stderr }) => ({ ok: true, stderr }),
        (error: { stderr?: string }) => ({ ok: false, stderr: String(error.stderr) }),
      );
      expect(checked, `${file}, block ${index + 1}`).toMatchObject({ ok: true });
      expect(checked.stderr).toContain("test is successful");
    }
  });
});
