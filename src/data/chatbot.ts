/**
 * NothingBot's lines. The keyword groups and their order are the product's (docs/product-behaviour.md#4-chatbot); the words are ours.
 * `all: true` means every keyword must appear ("what" and "get"); otherwise any one of them will do.
 */

export const CHATBOT_GREETING =
  "Hey there! I'm NothingBot, your guide to absolutely nothing. Ask me anything and I'll tell you nothing about it.";

export interface KeywordReply {
  keywords: readonly string[];
  all?: boolean;
  reply: string;
}

export const CHATBOT_KEYWORD_REPLIES: readonly KeywordReply[] = [
  {
    keywords: ["what", "get"],
    all: true,
    reply: "You get nothing. Premium, hand-crafted, small-batch nothing, delivered to wherever you already are.",
  },
  {
    keywords: ["refund", "return"],
    reply: "Refunds take zero to never business days. You'll get back exactly what you bought: nothing.",
  },
  {
    keywords: ["shipping", "delivery"],
    reply: "Shipping is free and already done. Check your pockets. Feel that? That's the delivery.",
  },
  {
    keywords: ["premium", "deluxe", "ultimate"],
    reply: "Premium nothing is like regular nothing, but it costs more. That's how you know it's better, man.",
  },
  {
    keywords: ["why", "point"],
    reply: "Why? Why not. The point is that there is no point. Deep, right?",
  },
  {
    keywords: ["support", "help"],
    reply: "I'm here to help! Sadly I can only help with nothing, which, good news, is all we sell.",
  },
  {
    keywords: ["complaint", "problem"],
    reply: "Your complaint has been filed under Nothing. Our team of zero people will review it never.",
  },
  {
    keywords: ["thank"],
    reply: "No, thank YOU. You've been nothing but wonderful.",
  },
];

/** For everything else, one of these at random (docs/product-reference.md#9: 5 replies). */
export const CHATBOT_FALLBACK_REPLIES = [
  "Whoa. That's deep. I'm gonna need a minute to think about nothing.",
  "Interesting. Have you considered buying nothing about it?",
  "I hear you. I also hear nothing, which is kind of our whole thing.",
  "Great question! The answer is nothing. It's usually nothing.",
  "Hmm, my circuits are empty. Like our warehouse. Like our products.",
] as const;
