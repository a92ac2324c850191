/**
 * The Astro integration that gives the pages their PNG images (scripts/siteImages.ts draws them):
 * each is named by a hash of its bytes under the build's assets folder (`/_astro/`), so the
 * service sends it with the year-long immutable cache of every hashed asset, and a changed picture
 * gets a new URL, which is what makes link previews cached by X, Telegram or Facebook refetch it.
 *
 * The pages learn the names from the virtual module `virtual:site-images` (BaseLayout's head, the
 * manifest endpoint); `astro dev` serves the images from memory; `astro build` writes them beside
 * Astro's own assets. They are drawn once per process, when a page first asks, so `astro check`
 * and `astro sync` never draw.
 */
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { AstroIntegration } from "astro";
import type { Plugin } from "vite";
import { type DrawnImage, type DrawnImages, drawSiteImages, SHARE_IMAGE_ALT } from "./siteImages.ts";

const MODULE_ID = "virtual:site-images";
const RESOLVED_MODULE_ID = `\0${MODULE_ID}`;

/** A published image: where the pages link it and what it is. */
export interface SiteImage {
  /** From the site's root: /_astro/share-image.<hash>.png */
  src: string;
  width: number;
  height: number;
  type: "image/png";
}

/** What `virtual:site-images` exports as `siteImages`. */
export interface SiteImages {
  share: SiteImage & { alt: string };
  appleTouchIcon: SiteImage;
  /** The web app manifest's icons, in its own shape. */
  manifestIcons: { src: string; sizes: string; type: "image/png"; purpose: "any" | "maskable" }[];
}

interface Published {
  images: SiteImages;
  /** Each image's bytes by its path from the site's root. */
  files: Map<string, Buffer>;
}

export function siteImages(): AstroIntegration {
  let publicDir = "";
  let assetsFolder = "_astro";
  let drawing: Promise<Published> | undefined;
  const published = () => {
    drawing ??= drawSiteImages(publicDir).then((drawn) => publish(drawn, assetsFolder));
    return drawing;
  };

  return {
    name: "nothing-store:site-images",
    hooks: {
      "astro:config:setup": ({ config, updateConfig, addWatchFile }) => {
        publicDir = fileURLToPath(config.publicDir);
        assetsFolder = config.build.assets;
        // A change to the art restarts the dev server, which draws afresh.
        addWatchFile(new URL("art/hero-void.svg", config.publicDir));
        addWatchFile(new URL("favicon.svg", config.publicDir));
        updateConfig({ vite: { plugins: [virtualModule(published)] } });
      },
      "astro:server:setup": ({ server }) => {
        server.middlewares.use((req, res, next) => {
          serveImage(published, req, res).then((served) => served || next(), next);
        });
      },
      "astro:build:done": async ({ dir, logger }) => {
        const { files } = await published();
        for (const [path, png] of files) {
          const file = fileURLToPath(new URL(`.${path}`, dir));
          await mkdir(dirname(file), { recursive: true });
          await writeFile(file, png);
        }
        const sizes = [...files].map(([path, png]) => `${path.split("/").pop()} ${png.length} B`);
        logger.info(`${files.size} images drawn: ${sizes.join(", ")}`);
      },
    },
  };
}

function virtualModule(published: () => Promise<Published>): Plugin {
  return {
    name: "nothing-store:site-images-module",
    resolveId: (id) => (id === MODULE_ID ? RESOLVED_MODULE_ID : undefined),
    async load(id) {
      if (id !== RESOLVED_MODULE_ID) return undefined;
      const { images } = await published();
      return `export const siteImages = ${JSON.stringify(images)};`;
    },
  };
}

async function serveImage(
  published: () => Promise<Published>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const path = new URL(req.url ?? "/", "http://dev").pathname;
  const png = (await published()).files.get(path);
  if (!png) return false;
  res.writeHead(200, { "Content-Type": "image/png", "Content-Length": png.length }).end(png);
  return true;
}

function publish(drawn: DrawnImages, assetsFolder: string): Published {
  const files = new Map<string, Buffer>();
  const place = (image: DrawnImage): SiteImage => {
    // As Vite names its assets: eight characters of a content hash.
    const hash = createHash("sha256").update(image.png).digest("base64url").slice(0, 8);
    const src = `/${assetsFolder}/${image.name}.${hash}.png`;
    files.set(src, image.png);
    return { src, width: image.width, height: image.height, type: "image/png" };
  };
  const manifestIcon = (image: DrawnImage, purpose: "any" | "maskable") => ({
    src: place(image).src,
    sizes: `${image.width}x${image.height}`,
    type: "image/png" as const,
    purpose,
  });
  return {
    images: {
      share: { ...place(drawn.share), alt: SHARE_IMAGE_ALT },
      appleTouchIcon: place(drawn.appleTouchIcon),
      manifestIcons: [
        ...drawn.icons.map((icon) => manifestIcon(icon, "any")),
        manifestIcon(drawn.maskableIcon, "maskable"),
      ],
    },
    files,
  };
}
