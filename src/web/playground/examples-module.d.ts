// The examples as build.ts bundles them (a virtual module of the page's bundle).
declare module "playground:examples" {
  const examples: readonly import("./examples.ts").Example[];
  export default examples;
}
