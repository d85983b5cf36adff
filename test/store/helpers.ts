// Shared by the store tests: a hand-moved clock and a valid smoke request.
import type { NewSmokeRequest } from "../../src/store/index.ts";

export class Clock {
  constructor(public t = Date.parse("2026-03-01T12:00:00Z")) {}
  now = (): Date => new Date(this.t);
  advance(seconds: number): void {
    this.t += seconds * 1000;
  }
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
}

export function request(overrides: Partial<NewSmokeRequest> = {}): NewSmokeRequest {
  return {
    repo: "NVIDIA-NeMo/Megatron-Bridge",
    pr: 1234,
    sha: "a".repeat(40),
    source: "github-comment",
    githubLogin: "alice",
    deliveryId: "d-1",
    recipe: "llama32_1b_pretrain_config",
    cp: 4,
    sizes: [2, 2],
    gpus: 4,
    iters: 2,
    overrides: ["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"],
    expectHcp: true,
    ...overrides,
  };
}
