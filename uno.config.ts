import { defineConfig, presetWind3, transformerDirectives } from "unocss";

/**
 * One palette for the whole store: the void (near-black violet), ink for text, and two accents:
 * violet for the "nothing" variant and gold for premium. Every text pairing clears WCAG AA.
 */
export default defineConfig({
  presets: [presetWind3()],
  transformers: [transformerDirectives()],
  theme: {
    colors: {
      void: { DEFAULT: "#0c0a14", 800: "#16131f", 700: "#1f1b2c", 600: "#2e2942" },
      ink: { DEFAULT: "#f4f2fa", muted: "#bdb6d2" },
      accent: { DEFAULT: "#b69cff", strong: "#d4c5ff" },
      gold: { DEFAULT: "#f5c451" },
      danger: { DEFAULT: "#ff8b8b" },
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
    btn: "inline-flex min-h-11 items-center justify-center gap-2 rounded-xl px-5 py-2.5 font-semibold transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-accent-strong",
    "btn-primary": "btn bg-accent text-void hover:bg-accent-strong",
    "btn-outline": "btn border border-void-600 text-ink hover:border-accent hover:text-accent-strong",
    badge: "inline-flex items-center gap-1 rounded-full px-2.5 py-0.5 text-xs font-semibold",
  },
});
