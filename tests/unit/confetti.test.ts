// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from "vitest";
import { showConfetti } from "../../src/stores/spins.ts";

// Confetti.astro's markup: two empty layers, and the page's one template of dots beside the first.
function page() {
  document.body.innerHTML = `
    <div data-confetti hidden aria-hidden="true"></div>
    <template data-confetti-dots><span class="confetti-dot"></span><span class="confetti-dot"></span></template>
    <div data-auction-confetti hidden aria-hidden="true"></div>`;
  const layer = (selector: string) => document.querySelector<HTMLElement>(selector) as HTMLElement;
  return { wheel: layer("[data-confetti]"), auction: layer("[data-auction-confetti]") };
}

describe("showConfetti", () => {
  afterEach(() => {
    document.body.innerHTML = "";
  });

  it("keeps the dots out of the document until a layer's first celebration", () => {
    const { wheel, auction } = page();
    expect(document.querySelectorAll(".confetti-dot")).toHaveLength(0);
    showConfetti(wheel, true);
    expect(wheel.hidden).toBe(false);
    expect(wheel.querySelectorAll(".confetti-dot")).toHaveLength(2);
    expect(auction.querySelectorAll(".confetti-dot")).toHaveLength(0);
  });

  it("copies the dots once per layer, and each layer gets its own", () => {
    const { wheel, auction } = page();
    showConfetti(wheel, true);
    showConfetti(wheel, false);
    expect(wheel.hidden).toBe(true);
    showConfetti(wheel, true);
    showConfetti(auction, true);
    expect(wheel.querySelectorAll(".confetti-dot")).toHaveLength(2);
    expect(auction.querySelectorAll(".confetti-dot")).toHaveLength(2);
  });

  it("does nothing without a layer", () => {
    page();
    expect(() => showConfetti(null, true)).not.toThrow();
  });
});
