/** What the container test's modules share: the repository they build, and commands run to their end. */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";

/** The checkout: the build context, package.json's pins, the lockfile. */
export const REPO = resolve(import.meta.dirname, "../../..");

/** execFile as a promise: resolves with stdout and stderr, rejects with them on a non-zero exit. */
export const run = promisify(execFile);
