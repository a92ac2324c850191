/**
 * The store's PNG images, drawn at build time from its own art (docs/design.md#9): the 1200×630
 * picture a shared link shows (Open Graph, X), and the icons of the installed page (manifest
 * 192, 512 and a maskable 512) and of an iOS home screen (180). Social sites and launchers do not
 * show SVG, so the SVG art (public/art/hero-void.svg, public/favicon.svg) is rasterised here by
 * sharp (librsvg), in the palette's colours, with no network.
 *
 * The lettering is set in DejaVu Sans from its font files, never "whatever sans-serif the machine
 * has", so CI and the container draw the same picture; without the fonts the build stops and says
 * which package to install. Same art, same fonts: same bytes, so the hashed names stay put.
 */
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import sharp, { type OverlayOptions } from "sharp";
import { SITE_NAME } from "../src/data/site.ts";
import { TIERS } from "../src/data/tiers.ts";
import { formatZn } from "../src/lib/format.ts";
import { palette } from "../uno.config.ts";

const SHARE_IMAGE_SIZE = { width: 1200, height: 630 } as const;
const ICON_SIZES = { manifest: [192, 512], appleTouch: 180 } as const;
/** The maskable icon's mark fills this share of its side, inside the spec's safe circle (80%). */
const MASKABLE_MARK_SHARE = 0.8;

/** What the share image shows, for og:image:alt and twitter:image:alt (docs/product.md#2-head). */
export const SHARE_IMAGE_ALT =
  "The Nothing Store: Buy Nothing. Feel Everything. An empty glass display case on a velvet pedestal, " +
  "under a spotlight, with a price tag reading 0 $ZN.";

/** Debian's fonts-dejavu-core puts them here; DEJAVU_FONT_DIR names another folder. */
const DEFAULT_FONT_DIR = "/usr/share/fonts/truetype/dejavu";
const FONT_FILES = { regular: "DejaVuSans.ttf", bold: "DejaVuSans-Bold.ttf" } as const;

export interface DrawnImage {
  /** A name for the file, without hash or extension: "share-image", "icon-192"… */
  name: string;
  width: number;
  height: number;
  png: Buffer;
}

export interface DrawnImages {
  share: DrawnImage;
  appleTouchIcon: DrawnImage;
  /** The manifest's icons: one per size, purpose "any". */
  icons: DrawnImage[];
  /** The manifest's maskable icon: full bleed, the mark inside the safe circle. */
  maskableIcon: DrawnImage;
}

interface Sources {
  heroArt: Buffer;
  favicon: Buffer;
  fonts: Record<keyof typeof FONT_FILES, string>;
}

/** Draws every image from the art under `publicDir` (the site's public/ folder). */
export async function drawSiteImages(publicDir: string, fontDir = defaultFontDir()): Promise<DrawnImages> {
  const sources: Sources = {
    heroArt: await readFile(join(publicDir, "art", "hero-void.svg")),
    favicon: await readFile(join(publicDir, "favicon.svg")),
    fonts: await findFonts(fontDir),
  };
  const [share, appleTouchIcon, maskableIcon, ...icons] = await Promise.all([
    drawShareImage(sources),
    drawIcon(sources.favicon, "apple-touch-icon", ICON_SIZES.appleTouch, { background: true, markShare: 1 }),
    drawIcon(sources.favicon, "icon-maskable-512", 512, { background: true, markShare: MASKABLE_MARK_SHARE }),
    ...ICON_SIZES.manifest.map((size) =>
      drawIcon(sources.favicon, `icon-${size}`, size, { background: false, markShare: 1 }),
    ),
  ]);
  return { share, appleTouchIcon, maskableIcon, icons };
}

function defaultFontDir(): string {
  const configured = process.env.DEJAVU_FONT_DIR?.trim();
  return configured ? configured : DEFAULT_FONT_DIR;
}

async function findFonts(fontDir: string): Promise<Sources["fonts"]> {
  const regular = join(fontDir, FONT_FILES.regular);
  const bold = join(fontDir, FONT_FILES.bold);
  for (const file of [regular, bold]) {
    try {
      await access(file);
    } catch {
      throw new Error(
        `The link preview image is lettered in DejaVu Sans, and ${file} is missing: install it ` +
          "(Debian and Ubuntu: apt-get install fonts-dejavu-core) or set DEJAVU_FONT_DIR to the folder " +
          `holding ${FONT_FILES.regular} and ${FONT_FILES.bold}.`,
      );
    }
  }
  return { regular, bold };
}

const dataUri = (svg: Buffer) => `data:image/svg+xml;base64,${svg.toString("base64")}`;

/**
 * The share image: on the void, the hero's display case on the right (its own background is the
 * void too, so a fade hides its left edge), and on the left the logo and name, the hero's
 * heading and the lowest price, as the home page says them.
 */
async function drawShareImage({ heroArt, favicon, fonts }: Sources): Promise<DrawnImage> {
  const { width, height } = SHARE_IMAGE_SIZE;
  // The art is 640×480: at the image's full height it is 840 wide; its right edge (only a star
  // or two) falls outside.
  const artWidth = (height * 640) / 480;
  const artLeft = 460;
  const logoSize = 72;
  const canvas = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
  <defs>
    <linearGradient id="fade" x1="0" y1="0" x2="1" y2="0">
      <stop offset="0" stop-color="${palette.void.DEFAULT}"/>
      <stop offset="1" stop-color="${palette.void.DEFAULT}" stop-opacity="0"/>
    </linearGradient>
  </defs>
  <rect width="${width}" height="${height}" fill="${palette.void.DEFAULT}"/>
  <image href="${dataUri(heroArt)}" x="${artLeft}" y="0" width="${artWidth}" height="${height}"/>
  <rect x="${artLeft}" width="200" height="${height}" fill="url(#fade)"/>
  <image href="${dataUri(favicon)}" x="72" y="72" width="${logoSize}" height="${logoSize}"/>
</svg>`;
  const lowestPrice = Math.min(...TIERS.map((tier) => tier.price));
  const lettering: OverlayOptions[] = await Promise.all([
    letter(fonts, { markup: span(SITE_NAME, palette.ink.DEFAULT), weight: "bold", size: 40 }, 168, 88),
    letter(
      fonts,
      {
        markup: `${span("Buy Nothing.", palette.ink.DEFAULT)}\n${span("Feel Everything.", palette.accent.DEFAULT)}`,
        weight: "bold",
        size: 68,
        spacing: 12,
      },
      72,
      232,
    ),
    letter(
      fonts,
      {
        markup: span(`Premium nothing from ${formatZn(lowestPrice)}`, palette.gold.DEFAULT),
        weight: "regular",
        size: 32,
      },
      72,
      494,
    ),
  ]);
  const png = await sharp(Buffer.from(canvas)).composite(lettering).png(PNG_OPTIONS).toBuffer();
  return { name: "share-image", width, height, png };
}

/** Text for pango's markup, in one colour. */
function span(text: string, colour: string): string {
  const escaped = text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  return `<span foreground="${colour}">${escaped}</span>`;
}

interface Lettering {
  markup: string;
  weight: keyof Sources["fonts"];
  /** In pixels. */
  size: number;
  /** Extra space between lines, in pixels. */
  spacing?: number;
}

/** One block of text as a transparent overlay whose top left corner sits at (left, top). */
async function letter(fonts: Sources["fonts"], block: Lettering, left: number, top: number): Promise<OverlayOptions> {
  const { markup, weight, size, spacing } = block;
  const face = weight === "bold" ? "DejaVu Sans Bold" : "DejaVu Sans";
  const input = await sharp({
    // At 72 dpi a point is a pixel. The description picks the face among the fonts pango knows,
    // the file given among them.
    text: { text: markup, font: `${face} ${size}`, fontfile: fonts[weight], rgba: true, dpi: 72, spacing },
  })
    .png()
    .toBuffer();
  return { input, left, top };
}

interface IconLayout {
  /** Fill the whole square with the void (maskable and iOS icons must be opaque to the edge). */
  background: boolean;
  /** How much of the side the favicon's drawing takes, centred. */
  markShare: number;
}

/** The favicon at `size` pixels square. */
async function drawIcon(favicon: Buffer, name: string, size: number, layout: IconLayout): Promise<DrawnImage> {
  const markSize = size * layout.markShare;
  const offset = (size - markSize) / 2;
  const canvas = `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}">
  ${layout.background ? `<rect width="${size}" height="${size}" fill="${palette.void.DEFAULT}"/>` : ""}
  <image href="${dataUri(favicon)}" x="${offset}" y="${offset}" width="${markSize}" height="${markSize}"/>
</svg>`;
  const png = await sharp(Buffer.from(canvas)).png(PNG_OPTIONS).toBuffer();
  return { name, width: size, height: size, png };
}

/** Full colour, best zlib effort: the share image's gradients band when quantised to a palette. */
const PNG_OPTIONS = { compressionLevel: 9, adaptiveFiltering: true } as const;
