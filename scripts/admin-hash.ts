/**
 * Prints the ADMIN_PASSWORD_HASH for a password read from standard input, never from the command
 * line (where it would stay in the shell's history and in the process list).
 *   npm run admin:hash                     # asks twice, without echo
 *   printf %s "$PASSWORD" | npm run admin:hash
 */
import { stderr, stdin, stdout } from "node:process";
import { hashPassword } from "../service/console/password.ts";

/** At least this many characters: anything shorter falls to guessing despite the rate limit. */
const MIN_PASSWORD_LENGTH = 12;

/** Reads one line from the terminal with echo off. */
function askHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    let typed = "";
    const onData = (chunk: Buffer) => {
      for (const character of chunk.toString("utf8")) {
        if (character === "\r" || character === "\n") {
          stdin.off("data", onData);
          stdin.setRawMode(false);
          stdin.pause();
          stderr.write("\n");
          resolve(typed);
          return;
        }
        if (character === "\u0003") {
          stdin.setRawMode(false);
          reject(new Error("cancelled"));
          return;
        }
        typed = character === "\u007f" ? [...typed].slice(0, -1).join("") : typed + character;
      }
    };
    stdin.on("data", onData);
  });
}

async function readPiped(): Promise<string> {
  let text = "";
  for await (const chunk of stdin) text += String(chunk);
  // One trailing line break is the pipe's, not the password's.
  return text.replace(/\r?\n$/, "");
}

async function readPassword(): Promise<string> {
  if (!stdin.isTTY) return readPiped();
  const first = await askHidden("Password: ");
  const again = await askHidden("Again: ");
  if (first !== again) throw new Error("the two passwords differ");
  return first;
}

if (process.argv.length > 2) {
  stderr.write("admin:hash takes no arguments: it reads the password from standard input.\n");
  process.exit(2);
}
try {
  const password = await readPassword();
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw new Error(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  stdout.write(`${await hashPassword(password)}\n`);
} catch (error) {
  stderr.write(`admin:hash: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
