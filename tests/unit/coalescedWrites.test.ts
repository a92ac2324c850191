import { describe, expect, it } from "vitest";
import { createCoalescedWrites } from "../../service/auction/coalescedWrites.ts";
import { corkableStream } from "../harness/corkableStream.ts";

/** A socket recording its writes as Node would make them: a corked run as one write of several chunks. */
function corkableSocket() {
  const writes: string[][] = [];
  const stream = corkableStream((chunks) => writes.push(chunks.map(String)));
  return Object.assign(stream, { writes });
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const chunk = (text: string) => Buffer.from(text);

describe("coalesced writes", () => {
  it("sends what one turn writes to a socket as one write, in order, at the turn's end", async () => {
    const writes = createCoalescedWrites();
    const [a, b] = [corkableSocket(), corkableSocket()];
    for (const text of ["1", "2", "3"]) {
      writes.write(a, chunk(text));
      writes.write(b, chunk(text));
    }
    expect(a.writes).toEqual([]);
    await nextTurn();
    expect(a.writes).toEqual([["1", "2", "3"]]);
    expect(b.writes).toEqual([["1", "2", "3"]]);
    expect([a.corked, b.corked]).toEqual([0, 0]);
  });

  it("keeps writes made by others to a corked socket in their place (ws's own answers between broadcasts)", async () => {
    const writes = createCoalescedWrites();
    const socket = corkableSocket();
    writes.write(socket, chunk("bid 1"));
    socket.write(chunk("accepted"));
    writes.write(socket, chunk("bid 2"));
    await nextTurn();
    expect(socket.writes).toEqual([["bid 1", "accepted", "bid 2"]]);
  });

  it("corks again in the next turn, and flush() sends at once", async () => {
    const writes = createCoalescedWrites();
    const socket = corkableSocket();
    writes.write(socket, chunk("first turn"));
    await nextTurn();
    writes.write(socket, chunk("second turn"));
    writes.write(socket, chunk("still second"));
    writes.flush();
    expect(socket.writes).toEqual([["first turn"], ["second turn", "still second"]]);
    // The turn's own flush then finds nothing corked: no extra uncork.
    await nextTurn();
    expect(socket.corked).toBe(0);
    expect(socket.writes).toHaveLength(2);
  });
});
