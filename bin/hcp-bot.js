#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader, so `npx hcp-bot` works right after
// `npm ci` with no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
