// The one export of workerd's built-in "cloudflare:workers" module the store uses.
declare module "cloudflare:workers" {
  export abstract class DurableObject {
    constructor(ctx: unknown, env: unknown);
    protected ctx: unknown;
    protected env: unknown;
  }
}
