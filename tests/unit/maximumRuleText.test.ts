/**
 * The maximum bids' rule is stated twice, for two readers: docs/protocol.md for whoever writes a
 * client, docs/product.md for whoever describes the product. Issue 45 asks for the same words in
 * both; this keeps them so (line breaks and the quote marks aside).
 */
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";

const words = (text: string) => text.replace(/\s+/g, " ").trim();

it("states the maximum bids' rule word for word the same in protocol.md and product.md", async () => {
  const protocol = await readFile("docs/protocol.md", "utf8");
  const product = await readFile("docs/product.md", "utf8");
  // protocol.md: the first paragraph of its section.
  const section = protocol.split("### Maximum bids\n\n")[1] ?? "";
  const protocolRule = words(section.split("\n\n")[0] ?? "");
  // product.md: the quote after its anchor.
  const quoted = (product.split('<a id="maximum-bids"></a>\n')[1] ?? "").split("\n\n")[0] ?? "";
  const productRule = words(quoted.replace(/^\s*> ?/gm, ""));
  expect(protocolRule).toMatch(/^A bid may carry a secret maximum: .+ blocks the name\.$/);
  expect(productRule).toBe(protocolRule);
});
