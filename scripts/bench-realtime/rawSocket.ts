/**
 * The load generators' WebSocket client (docs/design.md#6c): the handshake by hand over node:net, then a
 * frame scanner that does no more per bid broadcast than read its id from a fixed offset. A `ws`
 * client, which frames, copies, decodes and emits every message before the benchmark's own code
 * reads it, saturated the two cores before the service or the bare ceiling did, so the ceiling
 * measured was the consumers'. Every other message (openings, answers, pongs) is decoded whole.
 *
 * Arrival times are read once per TCP read: every frame of one read reached the process at that
 * moment, so latency is known for every broadcast at the cost of one clock read per read, not per
 * frame. Frames from the server are unmasked; frames to it are masked, as RFC 6455 requires.
 */
import { createHash, randomBytes, randomFillSync } from "node:crypto";
import { connect, type Socket } from "node:net";
import { isBidsFrame, singleBidId } from "./bidFrames.ts";

/** Wall-clock milliseconds with sub-millisecond resolution, the same in every process of the benchmark. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

const ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const MAX_HEAD_BYTES = 16_384;
const CLOSE_GRACE_MS = 2_000;

const OPCODE = { continuation: 0, text: 1, close: 8, ping: 9, pong: 10 } as const;

export interface RawSocketHandlers {
  /** A bid broadcast after the opening: its id, and when the read that brought it began. */
  onBroadcast?(id: number, atMs: number): void;
  /**
   * Instead of onBroadcast: every bid frame, one bid or several (docs/design.md#10), as its bytes
   * data[start, stop) (bidFrames.ts reads them). Without it, frames of several bids are dropped unread.
   */
  onBidFrame?(data: Buffer, start: number, stop: number, atMs: number): void;
  /** Any other text message after the opening, whole. */
  onMessage?(text: string): void;
  /** The TCP connection is gone (closed by either side, or cut). */
  onClose?(): void;
}

/** Masking keys, 4 bytes a frame, from a buffer refilled in one call when used up. */
const maskPool = Buffer.alloc(4_096);
let maskOffset = maskPool.length;

function maskKey(): Buffer {
  if (maskOffset + 4 > maskPool.length) {
    randomFillSync(maskPool);
    maskOffset = 0;
  }
  const key = maskPool.subarray(maskOffset, maskOffset + 4);
  maskOffset += 4;
  return key;
}

/** One complete masked client frame. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const lengthBytes = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const header = 2 + lengthBytes;
  const frame = Buffer.allocUnsafe(header + 4 + length);
  frame[0] = 0x80 | opcode;
  if (lengthBytes === 0) frame[1] = 0x80 | length;
  else if (lengthBytes === 2) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  const key = maskKey();
  key.copy(frame, header);
  const start = header + 4;
  for (let index = 0; index < length; index += 1) {
    frame[start + index] = (payload[index] ?? 0) ^ (key[index & 3] ?? 0);
  }
  return frame;
}

export class RawSocket {
  readonly tcp: Socket;
  private readonly handlers: RawSocketHandlers;
  /** Bytes of an incomplete frame (or handshake) carried over to the next read. */
  private leftover: Buffer | null = null;
  private upgraded = false;
  private opened = false;
  private fragments: Buffer[] | null = null;
  private closeSent = false;
  private gone = false;
  private onOpening: ((text: string) => void) | null = null;
  private onFailure: ((error: Error) => void) | null = null;
  private expectedAccept = "";

  constructor(tcp: Socket, handlers: RawSocketHandlers) {
    this.tcp = tcp;
    this.handlers = handlers;
    tcp.setNoDelay(true);
    tcp.on("data", (chunk: Buffer) => this.read(chunk));
    tcp.on("error", (error) => this.fail(error));
    tcp.on("close", () => {
      this.gone = true;
      this.fail(new Error("the connection closed before its opening message"));
      this.handlers.onClose?.();
    });
  }

  /** Open: the opening message arrived and the connection is still up. */
  get isOpen(): boolean {
    return this.opened && !this.gone && !this.closeSent;
  }

  /** Sends the upgrade request; calls onOpening with the first message (the snapshot or resume) once it is read. */
  waitForOpening(
    request: string,
    expectedAccept: string,
    onOpening: (text: string) => void,
    onFailure: (error: Error) => void,
  ): void {
    this.expectedAccept = expectedAccept.toLowerCase();
    this.onOpening = onOpening;
    this.onFailure = onFailure;
    this.tcp.write(request);
  }

  send(text: string): void {
    if (this.gone) return;
    this.tcp.write(clientFrame(OPCODE.text, Buffer.from(text)));
  }

  /** Stops reading: what the server sends piles up in the kernel's buffers, then in its own. */
  pause(): void {
    this.tcp.pause();
  }

  /** A closing handshake (1000), cut after CLOSE_GRACE_MS; resolves once the connection is gone. */
  async close(): Promise<void> {
    if (this.gone) return;
    const closed = new Promise<void>((resolve) => this.tcp.once("close", () => resolve()));
    this.sendClose();
    const timer = setTimeout(() => this.tcp.destroy(), CLOSE_GRACE_MS);
    await closed;
    clearTimeout(timer);
  }

  /** Cuts the connection with no closing handshake. */
  terminate(): void {
    this.tcp.destroy();
  }

  private sendClose(): void {
    if (this.closeSent || this.gone) return;
    this.closeSent = true;
    const code = Buffer.alloc(2);
    code.writeUInt16BE(1000);
    this.tcp.write(clientFrame(OPCODE.close, code));
  }

  private fail(error: Error): void {
    const onFailure = this.onFailure;
    this.onFailure = null;
    this.onOpening = null;
    if (onFailure && !this.opened) onFailure(error);
  }

  private read(chunk: Buffer): void {
    const at = nowMs();
    let data = chunk;
    if (this.leftover) {
      data = Buffer.concat([this.leftover, chunk]);
      this.leftover = null;
    }
    let offset = 0;
    if (!this.upgraded) {
      offset = this.readHandshake(data);
      if (offset < 0) return;
    }
    const end = data.length;
    while (offset + 2 <= end) {
      const first = data[offset] ?? 0;
      const second = data[offset + 1] ?? 0;
      let length = second & 0x7f;
      let header = 2;
      if (length === 126) {
        if (offset + 4 > end) break;
        length = data.readUInt16BE(offset + 2);
        header = 4;
      } else if (length === 127) {
        if (offset + 10 > end) break;
        length = Number(data.readBigUInt64BE(offset + 2));
        header = 10;
      }
      if ((second & 0x80) !== 0) {
        this.tcp.destroy(new Error("the server sent a masked frame"));
        return;
      }
      const start = offset + header;
      const stop = start + length;
      if (stop > end) break;
      this.frame(first, data, start, stop, at);
      if (this.gone) return;
      offset = stop;
    }
    // The incomplete frame, copied so the read's whole buffer is not kept alive by it.
    if (offset < end) this.leftover = Buffer.from(data.subarray(offset));
  }

  /** Reads the 101 answer; returns where the frames start, or -1 (more to come, or refused). */
  private readHandshake(data: Buffer): number {
    const headEnd = data.indexOf("\r\n\r\n");
    if (headEnd < 0) {
      if (data.length > MAX_HEAD_BYTES) this.tcp.destroy(new Error("the handshake answer never ended"));
      else this.leftover = data;
      return -1;
    }
    const head = data.toString("latin1", 0, headEnd);
    const statusLine = head.split("\r\n", 1)[0] ?? "";
    if (!/^HTTP\/1\.1 101 /.test(statusLine)) {
      this.tcp.destroy(new Error(`the upgrade was refused: ${statusLine}`));
      return -1;
    }
    // A wrong accept header means something else answered the upgrade.
    if (!head.toLowerCase().includes(`\r\nsec-websocket-accept: ${this.expectedAccept}`)) {
      this.tcp.destroy(new Error("the upgrade answer's Sec-WebSocket-Accept is wrong"));
      return -1;
    }
    this.upgraded = true;
    return headEnd + 4;
  }

  private frame(first: number, data: Buffer, start: number, stop: number, at: number): void {
    const opcode = first & 0x0f;
    const fin = (first & 0x80) !== 0;
    if (opcode === OPCODE.text && fin && this.opened) {
      const id = singleBidId(data, start, stop);
      const several = id < 0 && isBidsFrame(data, start, stop);
      if (id >= 0 || several) {
        if (this.handlers.onBidFrame) this.handlers.onBidFrame(data, start, stop, at);
        else if (id >= 0) this.handlers.onBroadcast?.(id, at);
        return;
      }
    }
    switch (opcode) {
      case OPCODE.text:
        if (fin) this.message(data.toString("utf8", start, stop));
        else this.fragments = [Buffer.from(data.subarray(start, stop))];
        return;
      case OPCODE.continuation:
        if (!this.fragments) return;
        this.fragments.push(Buffer.from(data.subarray(start, stop)));
        if (fin) {
          const whole = Buffer.concat(this.fragments).toString("utf8");
          this.fragments = null;
          this.message(whole);
        }
        return;
      case OPCODE.ping:
        if (!this.gone) this.tcp.write(clientFrame(OPCODE.pong, Buffer.from(data.subarray(start, stop))));
        return;
      case OPCODE.close:
        // The server's close, or its answer to ours: answer if needed, then end the connection.
        this.sendClose();
        this.tcp.end();
        return;
      default:
        // Binary frames and pongs: the protocol sends neither to a client that never pings.
        return;
    }
  }

  private message(text: string): void {
    if (!this.opened) {
      this.opened = true;
      const onOpening = this.onOpening;
      this.onOpening = null;
      this.onFailure = null;
      onOpening?.(text);
      return;
    }
    this.handlers.onMessage?.(text);
  }
}

export interface OpenedRawSocket {
  socket: RawSocket;
  /** The opening message (snapshot or resume), whole. */
  first: string;
  /** From starting the connection to reading the opening. */
  tookMs: number;
}

/** Opens one socket and resolves once its first message arrived; bounded by timeoutMs. */
export function openRawSocket(url: string, handlers: RawSocketHandlers, timeoutMs: number): Promise<OpenedRawSocket> {
  const startedAt = nowMs();
  const target = new URL(url);
  const key = randomBytes(16).toString("base64");
  const expectedAccept = createHash("sha1").update(`${key}${ACCEPT_GUID}`).digest("base64");
  const request =
    `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\n` +
    `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const tcp = connect({ host: target.hostname, port: Number(target.port) });
    const socket = new RawSocket(tcp, handlers);
    const timer = setTimeout(() => {
      tcp.destroy();
      reject(new Error("no opening message in time"));
    }, timeoutMs);
    tcp.once("connect", () =>
      socket.waitForOpening(
        request,
        expectedAccept,
        (first) => {
          clearTimeout(timer);
          resolve({ socket, first, tookMs: nowMs() - startedAt });
        },
        (error) => {
          clearTimeout(timer);
          reject(error);
        },
      ),
    );
    tcp.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
