import { defineConfig, presetWind3, transformerDirectives } from "unocss";

/**
 * One palette for the whole store, and the only place its colours are written: the void
 * (near-black violet), ink for text, and two accents: violet for the "nothing" variant and gold
 * for premium. Every text pairing clears WCAG AA. Markup uses the utilities (`bg-void`,
 * `stroke-accent`); CSS and inline styles use the variables below (`var(--c-accent)`); build-time
 * code that needs a literal value (a meta tag) imports `palette`.
 */
export const palette = {
  void: { DEFAULT: "#0c0a14", 800: "#16131f", 700: "#1f1b2c", 600: "#2e2942", 500: "#4a4266" },
  ink: { DEFAULT: "#f4f2fa", muted: "#bdb6d2" },
  accent: { DEFAULT: "#b69cff", strong: "#d4c5ff" },
  gold: { DEFAULT: "#f5c451", deep: "#c99a2e" },
  bronze: { DEFAULT: "#e0a27a" },
  live: { DEFAULT: "#5ee6a0" },
  danger: { DEFAULT: "#ff8b8b", surface: "#3a1219" },
};

/** `--c-void`, `--c-void-800`, … for every colour of the palette, on :root. */
function paletteVariables(): string {
  const declarations = Object.entries(palette).flatMap(([name, shades]) =>
    Object.entries(shades).map(([shade, value]) => `--c-${name}${shade === "DEFAULT" ? "" : `-${shade}`}:${value};`),
  );
  return `:root{${declarations.join("")}}`;
}

export default defineConfig({
  presets: [presetWind3()],
  transformers: [transformerDirectives()],
  preflights: [{ getCSS: paletteVariables }],
  theme: {
    colors: palette,
    // Motion has one switch: every animation is applied through the `motion-safe:` variant, so
    // under prefers-reduced-motion nothing moves while every state change still happens.
    animation: {
      keyframes: {
        float: "{0%,100%{transform:translateY(0)}50%{transform:translateY(-6px)}}",
        // Five whole turns end where they began, so the wheel can stop without a jump.
        "wheel-spin": "{to{transform:rotate(1800deg)}}",
        "confetti-fall": "{from{transform:translateY(-110vh) rotate(0deg)}to{transform:translateY(0) rotate(540deg)}}",
      },
      durations: { float: "6s", "wheel-spin": "2s", "confetti-fall": "2s" },
      timingFns: { float: "ease-in-out", "wheel-spin": "cubic-bezier(0.2, 0.7, 0.2, 1)", "confetti-fall": "ease-in" },
      counts: { float: "infinite" },
      // The dots wait above the view during their delay and stay where they land.
      properties: { "confetti-fall": { "animation-fill-mode": "both" } },
    },
    fontFamily: {
      sans: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
      mono: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace',
    },
  },
  shortcuts: {
    container: "mx-auto w-full max-w-7xl px-4 sm:px-6",
    section: "py-16 sm:py-20 scroll-mt-20",
    "section-title": "text-3xl sm:text-4xl font-extrabold tracking-tight text-ink text-balance",
    "section-lead": "mt-3 max-w-2xl text-lg text-ink-muted",
    card: "rounded-2xl border border-void-600 bg-void-800 p-6",
    btn: "inline-flex min-h-11 items-center justify-center gap-2 rounded-xl px-5 py-2.5 font-semibold motion-safe:transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-accent-strong",
    "btn-primary": "btn bg-accent text-void hover:bg-accent-strong",
    "btn-outline": "btn border border-void-600 text-ink hover:border-accent hover:text-accent-strong",
    badge: "inline-flex items-center gap-1 rounded-full px-2.5 py-0.5 text-xs font-semibold",
  },
});
