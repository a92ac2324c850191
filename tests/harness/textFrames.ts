/**
 * The payload of one complete, unmasked WebSocket text frame as the service writes them
 * (service/auction/wire.ts): a 2-byte header, 4 with a 16-bit length, 10 with a 64-bit one.
 */
export function textFramePayload(frame: Buffer): string {
  const length = (frame[1] as number) & 0x7f;
  const header = length === 126 ? 4 : length === 127 ? 10 : 2;
  return frame.subarray(header).toString("utf8");
}
