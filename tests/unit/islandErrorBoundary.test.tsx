// @vitest-environment happy-dom
import { act } from "react";
import { createRoot } from "react-dom/client";
import { afterEach, expect, it, vi } from "vitest";
import { ISLAND_ERROR_TEXT, withErrorBoundary } from "../../src/islands/IslandErrorBoundary.tsx";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => {
  document.body.innerHTML = "";
  vi.restoreAllMocks();
});

function render(node: React.ReactNode) {
  const container = document.createElement("div");
  document.body.append(container);
  act(() => createRoot(container).render(node));
  return container;
}

it("shows the spec's error text in place of an island that throws, and leaves its neighbour alone", () => {
  vi.spyOn(console, "error").mockImplementation(() => {});
  const Broken = withErrorBoundary(() => {
    throw new Error("boom");
  });
  const Healthy = withErrorBoundary(() => <p>still here</p>);
  const container = render(
    <>
      <Broken />
      <Healthy />
    </>,
  );
  expect(container.querySelector('[role="alert"]')?.textContent).toBe(ISLAND_ERROR_TEXT);
  expect(container.textContent).toContain("still here");
  expect(console.error).toHaveBeenCalledWith(ISLAND_ERROR_TEXT, expect.any(Error), expect.any(String));
});

it("renders the island itself when nothing throws", () => {
  const Fine = withErrorBoundary(({ label }: { label: string }) => <button type="button">{label}</button>);
  const container = render(<Fine label="Spin for Nothing!" />);
  expect(container.querySelector("button")?.textContent).toBe("Spin for Nothing!");
  expect(container.querySelector('[role="alert"]')).toBeNull();
});
