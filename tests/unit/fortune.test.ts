import { describe, expect, it } from "vitest";
import {
  consult,
  FORTUNE_DELAY_MS,
  FORTUNE_TEXT,
  fortuneButtonLabel,
  INITIAL_FORTUNE,
  reveal,
} from "../../src/lib/fortune.ts";

describe("crystal ball", () => {
  it("tells the one fortune after 2 s", () => {
    expect(FORTUNE_DELAY_MS).toBe(2000);
    expect(FORTUNE_TEXT).toBe("The future holds\u2026 nothing.");
  });

  it("goes idle -> consulting -> revealed, counting each consultation at the click", () => {
    const consulting = consult(INITIAL_FORTUNE);
    expect(consulting).toEqual({ phase: "consulting", told: 1 });
    const revealed = reveal(consulting);
    expect(revealed).toEqual({ phase: "revealed", told: 1 });
    expect(consult(revealed)).toEqual({ phase: "consulting", told: 2 });
  });

  it("ignores a second click while consulting, and a reveal with nothing to reveal", () => {
    const consulting = consult(INITIAL_FORTUNE);
    expect(consult(consulting)).toBe(consulting);
    expect(reveal(INITIAL_FORTUNE)).toBe(INITIAL_FORTUNE);
  });

  it('labels the button "Consult the Crystal Ball", then "Consult Again"', () => {
    expect(fortuneButtonLabel(INITIAL_FORTUNE)).toBe("Consult the Crystal Ball");
    expect(fortuneButtonLabel(consult(INITIAL_FORTUNE))).toBe("Consulting...");
    expect(fortuneButtonLabel(reveal(consult(INITIAL_FORTUNE)))).toBe("Consult Again");
  });
});
