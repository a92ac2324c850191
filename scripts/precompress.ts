/**
 * Writes .br and .gz beside every compressible file of the built site, so the server sends
 * compressed bytes without compressing on each request (sirv picks them by Accept-Encoding).
 * Usage: node scripts/precompress.ts <dir>
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".txt", ".json", ".xml", ".webmanifest"]);
// Below this a compressed copy saves nothing worth a file.
const MIN_BYTES = 512;

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node scripts/precompress.ts <dir>");
  process.exit(2);
}

let files = 0;
let before = 0;
let afterBrotli = 0;
for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !COMPRESSIBLE.has(extname(entry.name))) continue;
  const path = join(entry.parentPath, entry.name);
  const body = await readFile(path);
  if (body.length < MIN_BYTES) continue;
  const brotli = brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
  await writeFile(`${path}.br`, brotli);
  await writeFile(`${path}.gz`, gzipSync(body, { level: 9 }));
  files += 1;
  before += body.length;
  afterBrotli += brotli.length;
}
console.log(`precompressed ${files} files: ${before} bytes -> ${afterBrotli} bytes brotli`);
