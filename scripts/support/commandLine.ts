import { errorMessage } from "./childProcess.ts";

/**
 * A script's options from its command line through `read` (node:util's parseArgs and the script's
 * own checks); any error is a usage error: printed with the usage line, exit code 2.
 */
export function readCommandLine<T>(label: string, usage: string, read: (args: string[]) => T): T {
  try {
    return read(process.argv.slice(2));
  } catch (error) {
    console.error(`${label}: ${errorMessage(error)}\n${usage}`);
    process.exit(2);
  }
}
