/**
 * The PNG images drawn at build time from the site's art (docs/design.md#9, docs/product.md#2-head):
 * their pixel sizes read back from the bytes, the same bytes on every draw (the hashed names
 * depend on it), the maskable icon's mark inside the safe circle, opaque icons where launchers
 * need them, and the share image's lettering in the palette's colours.
 */
import { join } from "node:path";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { type DrawnImages, drawSiteImages } from "../../scripts/siteImages.ts";
import { palette } from "../../uno.config.ts";

const PUBLIC_DIR = join(import.meta.dirname, "../../public");
interface Pixels {
  width: number;
  height: number;
  /** RGBA at (x, y). */
  at(x: number, y: number): [number, number, number, number];
}

async function pixelsOf(png: Buffer): Promise<Pixels> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    at: (x, y) => {
      const offset = (y * info.width + x) * 4;
      return [data[offset] ?? -1, data[offset + 1] ?? -1, data[offset + 2] ?? -1, data[offset + 3] ?? -1];
    },
  };
}

function rgb(hex: string): [number, number, number] {
  const value = Number.parseInt(hex.slice(1), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

const VOID = rgb(palette.void.DEFAULT);
/** Whether a pixel's red, green and blue are each within `tolerance` of the colour's. */
const near = (pixel: readonly number[], colour: readonly [number, number, number], tolerance: number) =>
  colour.every((channel, index) => Math.abs((pixel[index] ?? -256) - channel) <= tolerance);

let images: DrawnImages;
beforeAll(async () => {
  images = await drawSiteImages(PUBLIC_DIR);
});

describe("the site's PNG images", () => {
  it("are PNGs of the sizes they declare: share 1200×630, icons 192, 512, maskable 512, apple-touch 180", async () => {
    const expected = [
      [images.share, 1200, 630],
      [images.icons[0], 192, 192],
      [images.icons[1], 512, 512],
      [images.maskableIcon, 512, 512],
      [images.appleTouchIcon, 180, 180],
    ] as const;
    expect(images.icons).toHaveLength(2);
    for (const [image, width, height] of expected) {
      if (!image) throw new Error("an image is missing");
      const metadata = await sharp(image.png).metadata();
      expect([image.name, metadata.format, metadata.width, metadata.height]).toEqual([
        image.name,
        "png",
        width,
        height,
      ]);
      expect([image.width, image.height]).toEqual([width, height]);
    }
  });

  it("are the same bytes on every draw, so a rebuild keeps their hashed names", async () => {
    const again = await drawSiteImages(PUBLIC_DIR);
    const bytes = (drawn: DrawnImages) =>
      [drawn.share, drawn.appleTouchIcon, drawn.maskableIcon, ...drawn.icons].map((image) => image.png);
    expect(bytes(again)).toEqual(bytes(images));
  });

  it("the maskable icon is opaque void to the edge and draws its mark only inside the safe circle (40% radius)", async () => {
    const pixels = await pixelsOf(images.maskableIcon.png);
    const centre = pixels.width / 2;
    const safeRadius = 0.4 * pixels.width;
    let markInside = 0;
    for (let y = 0; y < pixels.height; y += 1) {
      for (let x = 0; x < pixels.width; x += 1) {
        const pixel = pixels.at(x, y);
        expect(pixel[3]).toBe(255);
        const outside = Math.hypot(x + 0.5 - centre, y + 0.5 - centre) > safeRadius;
        // 2: the favicon's own void square, drawn on the void, leaves rounding at its corners.
        if (outside && !near(pixel, VOID, 2)) throw new Error(`mark outside the safe zone at (${x}, ${y}): ${pixel}`);
        if (!outside && !near(pixel, VOID, 8)) markInside += 1;
      }
    }
    // The dashed ring and the stroke cover a good part of the circle.
    expect(markInside).toBeGreaterThan(0.1 * Math.PI * safeRadius ** 2);
  });

  it("the apple-touch icon is opaque (iOS fills transparency with black); the manifest's plain icons keep the favicon's round corners", async () => {
    const apple = await pixelsOf(images.appleTouchIcon.png);
    for (let y = 0; y < apple.height; y += 1) {
      for (let x = 0; x < apple.width; x += 1) expect(apple.at(x, y)[3]).toBe(255);
    }
    for (const icon of images.icons) {
      const pixels = await pixelsOf(icon.png);
      expect(pixels.at(0, 0)[3]).toBe(0);
      expect(near(pixels.at(icon.width / 2, 4), VOID, 0)).toBe(true);
    }
  });

  it("the share image letters its heading and price in the palette's ink, accent and gold, left of the art", async () => {
    const pixels = await pixelsOf(images.share.png);
    const counts = { ink: 0, accent: 0, gold: 0 };
    // Below the logo and the name, left of the display case.
    for (let y = 200; y < 560; y += 1) {
      for (let x = 0; x < 440; x += 1) {
        const pixel = pixels.at(x, y);
        if (near(pixel, rgb(palette.ink.DEFAULT), 10)) counts.ink += 1;
        if (near(pixel, rgb(palette.accent.DEFAULT), 10)) counts.accent += 1;
        if (near(pixel, rgb(palette.gold.DEFAULT), 10)) counts.gold += 1;
      }
    }
    // "Buy Nothing." in ink, "Feel Everything." in accent, the price line in gold: thousands of
    // pixels each; a font that failed to load would leave the void.
    expect(counts.ink).toBeGreaterThan(3000);
    expect(counts.accent).toBeGreaterThan(3000);
    expect(counts.gold).toBeGreaterThan(1000);
    expect(near(pixels.at(20, 20), VOID, 0)).toBe(true);
  });

  it("stops with the font it needs and the package to install when DejaVu Sans is missing", async () => {
    await expect(drawSiteImages(PUBLIC_DIR, "/no/such/fonts")).rejects.toThrow(
      /DejaVu Sans, and \/no\/such\/fonts\/DejaVuSans\.ttf is missing: install it \(Debian and Ubuntu: apt-get install fonts-dejavu-core\) or set DEJAVU_FONT_DIR/,
    );
  });
});
