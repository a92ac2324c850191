import { describe, expect, it } from "vitest";
import { CHATBOT_FALLBACK_REPLIES, CHATBOT_KEYWORD_REPLIES } from "../../src/data/chatbot.ts";
import { chooseReply, isSendable, replyDelayMs } from "../../src/lib/chatbot.ts";

/** The reply of the keyword group whose first keyword is `keyword`. */
function replyFor(keyword: string): string {
  const group = CHATBOT_KEYWORD_REPLIES.find((candidate) => candidate.keywords[0] === keyword);
  if (!group) throw new Error(`no group for ${keyword}`);
  return group.reply;
}

describe("NothingBot reply choice", () => {
  it("has the product's eight keyword groups (docs/product-behaviour.md#4-chatbot) in order, with distinct replies", () => {
    expect(CHATBOT_KEYWORD_REPLIES.map((group) => group.keywords)).toEqual([
      ["what", "get"],
      ["refund", "return"],
      ["shipping", "delivery"],
      ["premium", "deluxe", "ultimate"],
      ["why", "point"],
      ["support", "help"],
      ["complaint", "problem"],
      ["thank"],
    ]);
    expect(new Set(CHATBOT_KEYWORD_REPLIES.map((group) => group.reply)).size).toBe(8);
  });

  const cases: [string, string][] = [
    ["What do I get for my money?", "what"],
    ["I want a refund", "refund"],
    ["Can I return it?", "refund"],
    ["How much is shipping?", "shipping"],
    ["When is delivery?", "shipping"],
    ["Is premium worth it?", "premium"],
    ["Tell me about deluxe", "premium"],
    ["ULTIMATE nothing please", "premium"],
    ["Why would anyone buy this", "why"],
    ["What's the point", "why"],
    ["I need support", "support"],
    ["help", "support"],
    ["I have a complaint", "complaint"],
    ["There is a problem", "complaint"],
    ["Thanks a lot", "thank"],
    ["thank you", "thank"],
  ];
  for (const [message, group] of cases) {
    it(`answers "${message}" from the ${group} group`, () => {
      expect(chooseReply(message, 0)).toBe(replyFor(group));
    });
  }

  it("matches case-insensitively, as a substring", () => {
    expect(chooseReply("REFUNDS?!", 0)).toBe(replyFor("refund"));
    expect(chooseReply("whatever you GET", 0)).toBe(replyFor("what"));
    expect(chooseReply("thankful", 0)).toBe(replyFor("thank"));
  });

  it('needs both "what" and "get": "what" alone falls through to later groups or a fallback', () => {
    expect(chooseReply("what is this", 0)).toBe(CHATBOT_FALLBACK_REPLIES[0]);
    expect(chooseReply("get me out", 0)).toBe(CHATBOT_FALLBACK_REPLIES[0]);
    expect(chooseReply("what about shipping", 0)).toBe(replyFor("shipping"));
  });

  it("tries the groups in the product's order (docs/product-behaviour.md#4-chatbot): the first match wins", () => {
    expect(chooseReply("what do I get if I return it?", 0)).toBe(replyFor("what"));
    expect(chooseReply("refund the shipping", 0)).toBe(replyFor("refund"));
    expect(chooseReply("premium delivery", 0)).toBe(replyFor("shipping"));
    expect(chooseReply("why premium", 0)).toBe(replyFor("premium"));
    expect(chooseReply("help, what's the point", 0)).toBe(replyFor("why"));
    expect(chooseReply("complaint for support", 0)).toBe(replyFor("support"));
    expect(chooseReply("thanks for the problem", 0)).toBe(replyFor("complaint"));
  });

  it("falls back to one of five replies, picked by the random draw", () => {
    expect(CHATBOT_FALLBACK_REPLIES).toHaveLength(5);
    expect([0, 0.2, 0.4, 0.6, 0.8].map((random) => chooseReply("hello", random))).toEqual([
      ...CHATBOT_FALLBACK_REPLIES,
    ]);
    expect(chooseReply("hello", 0.9999)).toBe(CHATBOT_FALLBACK_REPLIES[4]);
  });

  it("replies after 1 to 3 s", () => {
    expect(replyDelayMs(0)).toBe(1000);
    expect(replyDelayMs(0.5)).toBe(2000);
    expect(replyDelayMs(0.9999)).toBeLessThan(3000);
    expect(replyDelayMs(0.9999)).toBeGreaterThanOrEqual(2999);
  });

  it("does not send blank or whitespace-only messages", () => {
    expect(isSendable("")).toBe(false);
    expect(isSendable("   \t\n ")).toBe(false);
    expect(isSendable(" hi ")).toBe(true);
  });
});
