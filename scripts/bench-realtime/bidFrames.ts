/**
 * Reading bid frames at a fixed offset, without parsing their JSON: the load generators' sockets
 * read thousands a second. A "bid" frame (`{"type":"bid","bid":{"id":…`, as the service and the
 * bare server write it) and a "bids" frame (`{"type":"bids","lastId":…,"bidders":…`, the frame
 * budget's, docs/design.md#10): the newest id, the bidder count and each carried id, oldest first.
 */

const BID_PREFIX = Buffer.from('{"type":"bid","bid":{"id":');
const BIDS_PREFIX = Buffer.from('{"type":"bids","lastId":');
const BIDDERS_KEY = Buffer.from(',"bidders":');
/** How each carried bid begins in a "bids" frame's list; inside a string its quotes would be escaped. */
const BID_OBJECT = Buffer.from('{"id":');

function startsWith(data: Buffer, start: number, stop: number, prefix: Buffer): boolean {
  if (stop - start <= prefix.length) return false;
  for (let index = 0; index < prefix.length; index += 1) {
    if (data[start + index] !== prefix[index]) return false;
  }
  return true;
}

/** The decimal number at `at`, and where it ends; -1 when there is no digit there. */
function digitsAt(data: Buffer, at: number, stop: number): [value: number, end: number] {
  let value = 0;
  let index = at;
  for (; index < stop; index += 1) {
    const byte = data[index] ?? 0;
    if (byte < 0x30 || byte > 0x39) break;
    value = value * 10 + (byte - 0x30);
  }
  return index === at ? [-1, at] : [value, index];
}

/** The id of a "bid" frame in data[start, stop), or -1 when the frame is anything else. */
export function singleBidId(data: Buffer, start: number, stop: number): number {
  return startsWith(data, start, stop, BID_PREFIX) ? digitsAt(data, start + BID_PREFIX.length, stop)[0] : -1;
}

/** Whether data[start, stop) is a "bids" frame. */
export function isBidsFrame(data: Buffer, start: number, stop: number): boolean {
  return startsWith(data, start, stop, BIDS_PREFIX);
}

export interface BidFrameReading {
  /** The newest bid's id. */
  lastId: number;
  bidders: number;
}

/**
 * A bid frame's newest id and bidder count, each carried id handed to `onId` oldest first; null
 * for any other frame, or one not shaped as the service writes it.
 */
export function readBidFrame(
  data: Buffer,
  start: number,
  stop: number,
  onId: (id: number) => void,
): BidFrameReading | null {
  const single = singleBidId(data, start, stop);
  if (single >= 0) {
    const at = data.indexOf(BIDDERS_KEY, start + BID_PREFIX.length);
    if (at < 0 || at >= stop) return null;
    const [bidders] = digitsAt(data, at + BIDDERS_KEY.length, stop);
    onId(single);
    return { lastId: single, bidders };
  }
  if (!isBidsFrame(data, start, stop)) return null;
  const [lastId, afterLastId] = digitsAt(data, start + BIDS_PREFIX.length, stop);
  if (lastId < 0 || !startsWith(data, afterLastId, stop, BIDDERS_KEY)) return null;
  const [bidders, afterBidders] = digitsAt(data, afterLastId + BIDDERS_KEY.length, stop);
  for (let at = data.indexOf(BID_OBJECT, afterBidders); at >= 0 && at < stop; at = data.indexOf(BID_OBJECT, at + 1)) {
    onId(digitsAt(data, at + BID_OBJECT.length, stop)[0]);
  }
  return { lastId, bidders };
}
