/** The news pop-ups' jokes (docs/product-reference.md#9: 12; the words are ours). */

export interface NewsJoke {
  title: string;
  description: string;
}

export const NEWS_JOKES: readonly NewsJoke[] = [
  { title: "Breaking News", description: "Local man buys nothing, reports feeling exactly the same." },
  { title: "Market Update", description: "$ZN holds steady at zero. Analysts call it the most stable asset ever." },
  { title: "Just In", description: "Someone in Ohio upgraded to Deluxe Nothing. They say it's twice as empty." },
  { title: "Warehouse Report", description: "Inventory check complete. We still have nothing. Plenty of it." },
  { title: "Science Desk", description: "Physicists confirm our nothing is 100% pure. No traces of something." },
  { title: "Customer Alert", description: "A buyer's nothing arrived early. It was there before they ordered it." },
  { title: "Weather", description: "Forecast: clear skies, zero chance of anything. Great day to buy nothing." },
  { title: "Celebrity Watch", description: "A famous influencer was spotted holding nothing. It's giving minimalism." },
  { title: "Tech News", description: "Our servers now deliver nothing 40% faster. You will not notice." },
  { title: "Limited Offer", description: "Buy one nothing, get nothing free. Offer valid forever, or never." },
  { title: "Sports", description: "Team Nothing wins again, 0 to 0. Fans are thrilled, refs are confused." },
  {
    title: "Philosophy Corner",
    description: "If you buy nothing and nobody sees it, did you still get a great deal? Yes.",
  },
];
