/** What the container test's modules share: the repository they build, and commands run to their end. */
import { resolve } from "node:path";

export { run } from "../../../scripts/harness/childProcess.ts";

/** The checkout: the build context, package.json's pins, the lockfile. */
export const REPO = resolve(import.meta.dirname, "../../..");
