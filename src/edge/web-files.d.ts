// The web pages' built files (dist/web: the playground, its scripts and WebAssembly, the style
// sheet, the rendered rule pages) as the edge bundles know them: scripts/build-edge.ts copies
// them to dist/edge-web/ and writes this module with their names and the build's hash.
// Each runtime entry reads the files its own way: Workers Static Assets on Cloudflare (the
// ASSETS binding), the files next to the bundle on Deno.
declare module "edge:web-files" {
  /** The web build's hash (dist/web/build.json): the files' ETag. */
  export const hash: string;
  /** Every file of the build, by its path in it (`playground/page.js`). */
  export const names: readonly string[];
  /** Where they are from the bundle's folder (`../edge-web/`). */
  export const folder: string;
}
