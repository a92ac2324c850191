/** The store's name where links, tabs and installed pages show it (docs/product.md#2-head). */
export const SITE_NAME = "The Nothing Store";
/** Under an installed page's icon, where launchers cut names longer than about 12 characters. */
export const SITE_SHORT_NAME = "Nothing";
