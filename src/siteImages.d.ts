/** The pages' PNG images, named by scripts/siteImagesIntegration.ts at build time. */
declare module "virtual:site-images" {
  export const siteImages: import("../scripts/siteImagesIntegration.ts").SiteImages;
}
