/** Copy for the $ZN introduction and the "How to buy $ZN" steps (ours to write: docs/design.md#3a). */

export interface StatCard {
  value: string;
  label: string;
  note: string;
}

export const ZN_STAT_CARDS: readonly StatCard[] = [
  { value: "0", label: "Utility", note: "Audited by nobody, confirmed by everybody." },
  { value: "100%", label: "Pure Nothing", note: "No additives, no content, no regrets (some regrets)." },
  { value: "∞", label: "Vibes", note: "The one thing $ZN has plenty of." },
];

export interface HowToBuyStep {
  title: string;
  text: string;
}

export const HOW_TO_BUY_STEPS: readonly HowToBuyStep[] = [
  { title: "Get a wallet", text: "Any wallet that holds tokens will do. It will soon hold slightly fewer." },
  { title: "Get $ZN", text: "Swap something for $ZN (Zero Note). The something leaves; the Zero Note stays." },
  {
    title: "Press Buy Nothing",
    text: "Pick a level of nothing below, press Buy Nothing and pay the request it makes, from your wallet. $ZN sent any other way is not credited.",
  },
  { title: "Receive nothing", text: "Delivered instantly, everywhere, forever. Check your pockets: there it is." },
];
