// The built Deno entry under Deno (from npm), with a local Deno KV file.
import { defineEdgeScenarios } from "./scenarios.ts";

defineEdgeScenarios("deno");
