/**
 * What one frame costs the process that writes it, whatever it carries (docs/design.md#10): a
 * bare `net` server in a child process writes one prebuilt frame to each of 2,000 loopback
 * sockets at 10 or 20 frames a second, and reports its own CPU per write, split into user and
 * kernel time; this process holds the 2,000 reading ends. Varied: the frame's size (a lone bid's
 * frame, about 200 B, or a conflated frame of 50 bids, about 5 KB), and the socket's options
 * (Nagle on, or every socket corked for the pass). 4 s per setting, about 40 s in all.
 * Usage: npm run bench:write-cost [-- --sockets N --seconds S]
 */
import { fork } from "node:child_process";
import { createConnection, createServer, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { readCommandLine, wholeNumber } from "./harness/commandLine.ts";

interface Setting {
  framesPerSecond: number;
  frameBytes: number;
  mode: "plain" | "corked" | "nagle";
}

interface WriterReport {
  writes: number;
  userMicrosecondsPerWrite: number;
  kernelMicrosecondsPerWrite: number;
}

const SETTINGS: Setting[] = [
  { framesPerSecond: 10, frameBytes: 200, mode: "plain" },
  { framesPerSecond: 20, frameBytes: 200, mode: "plain" },
  { framesPerSecond: 20, frameBytes: 5_000, mode: "plain" },
  { framesPerSecond: 20, frameBytes: 200, mode: "corked" },
  { framesPerSecond: 20, frameBytes: 200, mode: "nagle" },
];
const WARM_UP_MS = 500;
const CONNECT_STEP = 200;
const USAGE = "npm run bench:write-cost [-- --sockets N --seconds S]";

/** The child: accepts the sockets, then writes to each at the setting's rate and reports its CPU. */
async function writer(sockets: number, seconds: number, setting: Setting): Promise<void> {
  const frame = Buffer.alloc(setting.frameBytes, "a");
  const accepted: Socket[] = [];
  const allIn = Promise.withResolvers<void>();
  const server = createServer((socket) => {
    socket.setNoDelay(setting.mode !== "nagle");
    socket.on("error", () => {});
    accepted.push(socket);
    if (accepted.length === sockets) allIn.resolve();
  });
  server.listen({ port: 0, host: "127.0.0.1", backlog: sockets }, () =>
    process.send?.({ port: (server.address() as { port: number }).port }),
  );
  await allIn.promise;
  await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
  const cpuBefore = process.cpuUsage();
  let writes = 0;
  const pass = setInterval(() => {
    if (setting.mode === "corked") for (const socket of accepted) socket.cork();
    for (const socket of accepted) socket.write(frame);
    writes += accepted.length;
    if (setting.mode === "corked") for (const socket of accepted) socket.uncork();
  }, 1000 / setting.framesPerSecond);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  clearInterval(pass);
  const cpu = process.cpuUsage(cpuBefore);
  const report: WriterReport = {
    writes,
    userMicrosecondsPerWrite: cpu.user / writes,
    kernelMicrosecondsPerWrite: cpu.system / writes,
  };
  process.send?.(report, () => process.exit(0));
}

/** This process: starts a writer per setting and holds its reading ends. */
async function measure(sockets: number, seconds: number): Promise<void> {
  console.log(`${sockets} loopback sockets, ${seconds} s per setting`);
  console.log("frames/s | frame | socket | writes | µs a write (user + kernel)");
  for (const setting of SETTINGS) {
    const child = fork(import.meta.filename, [
      `--sockets=${sockets}`,
      `--seconds=${seconds}`,
      `--writer=${JSON.stringify(setting)}`,
    ]);
    const messages: unknown[] = [];
    const next = () =>
      new Promise<unknown>((resolve, reject) => {
        const queued = messages.shift();
        if (queued !== undefined) return resolve(queued);
        child.once("message", resolve);
        child.once("exit", (code) => reject(new Error(`the writer exited ${code} before reporting`)));
      });
    const { port } = (await next()) as { port: number };
    const readers: Socket[] = [];
    // In steps of 200, so the listen queue never overflows (a dropped handshake waits for a retry).
    for (let opened = 0; opened < sockets; opened += CONNECT_STEP) {
      const step = Array.from({ length: Math.min(CONNECT_STEP, sockets - opened) }, () => {
        const reader = createConnection(port, "127.0.0.1");
        reader.on("data", () => {});
        readers.push(reader);
        return new Promise((resolve, reject) => reader.once("connect", resolve).once("error", reject));
      });
      await Promise.all(step);
    }
    const report = (await next()) as WriterReport;
    for (const reader of readers) reader.destroy();
    const total = report.userMicrosecondsPerWrite + report.kernelMicrosecondsPerWrite;
    console.log(
      `${setting.framesPerSecond} | ${setting.frameBytes} B | ${setting.mode} | ${report.writes} | ` +
        `${total.toFixed(2)} (${report.userMicrosecondsPerWrite.toFixed(2)} + ${report.kernelMicrosecondsPerWrite.toFixed(2)})`,
    );
  }
}

const { sockets, seconds, writerSetting } = readCommandLine("bench:write-cost", USAGE, (args) => {
  const { values } = parseArgs({
    args,
    options: {
      sockets: { type: "string", default: "2000" },
      seconds: { type: "string", default: "4" },
      writer: { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    sockets: wholeNumber("sockets", values.sockets, 1, 10_000),
    seconds: wholeNumber("seconds", values.seconds, 1, 60),
    writerSetting: values.writer,
  };
});
if (writerSetting === undefined) await measure(sockets, seconds);
else await writer(sockets, seconds, JSON.parse(writerSetting) as Setting);
