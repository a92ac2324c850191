/** The six lottery prizes (docs/product.md#3). Every one of them is worth exactly $0. */
import { DRAWINGS } from "./drawings.ts";

export type PrizeRarity = "common" | "rare" | "epic" | "legendary";

export interface Prize {
  id: number;
  name: string;
  description: string;
  rarity: PrizeRarity;
  /** SVG path data for a 24 x 24 stroked icon, so the static gallery and the wheel island draw the same icon. */
  icon: string;
  /** What the prize is worth: always $0, said differently each time. */
  value: string;
}

export const PRIZES: readonly Prize[] = [
  {
    id: 1,
    name: "Basic Nothing",
    description: "Your standard-issue nothing. Classic, timeless, and kind of empty, man.",
    rarity: "common",
    icon: "M12 4a8 8 0 1 0 0 16a8 8 0 1 0 0-16",
    value: "Worth $0, every cent of it",
  },
  {
    id: 2,
    name: "Shiny Nothing",
    description: "The same nothing, but it catches the light. There is no light. Still shiny though.",
    rarity: "common",
    icon: "M12 8a4 4 0 1 0 0 8a4 4 0 1 0 0-8M12 2v3M12 19v3M2 12h3M19 12h3M5 5l2 2M17 17l2 2M5 19l2-2M17 7l2-2",
    value: "Worth $0, polished",
  },
  {
    id: 3,
    name: "Rare Void",
    description: "Hand-harvested from the far side of the couch cushions, where the snacks used to be.",
    rarity: "rare",
    icon: "M3 12c0-2.8 4-5 9-5s9 2.2 9 5-4 5-9 5-9-2.2-9-5zM8 12c0-1.4 1.8-2.5 4-2.5s4 1.1 4 2.5-1.8 2.5-4 2.5-4-1.1-4-2.5z",
    value: "Worth a rare $0",
  },
  {
    id: 4,
    name: "Epic Emptiness",
    description: "A box so empty it echoes. Whoa. Did you hear that? Neither did we.",
    rarity: "epic",
    icon: "M3 8l9-5 9 5v8l-9 5-9-5zM3 8l9 5 9-5M12 13v8",
    value: "Worth an epic $0",
  },
  {
    id: 5,
    name: "Mythical Nothing",
    description: "Legends say it was never really there. The legends are right, which is the wild part.",
    rarity: "legendary",
    icon: DRAWINGS.star,
    value: "Worth $0, mythically",
  },
  {
    id: 6,
    name: "Quantum Void",
    description: "It exists and doesn't exist at the same time, until you look. Then it definitely doesn't.",
    rarity: "legendary",
    icon: "M12 12h.01M4 12c0-2.2 3.6-4 8-4s8 1.8 8 4-3.6 4-8 4-8-1.8-8-4zM8 5c1.9-1.1 5.6 1 7.8 4.9s2.1 8.1.2 9.1-5.6-1-7.8-4.9S6.1 6 8 5z",
    value: "Worth $0 in every universe",
  },
];
