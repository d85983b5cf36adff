// The built worker on workerd (Miniflare, with wrangler.toml's Durable Object and Queue).
import { defineEdgeScenarios } from "./scenarios.ts";

defineEdgeScenarios("workerd");
