// The exact messages Megatron-Bridge (B*), Megatron-Core/Megatron-LM (M*) and
// Transformer Engine (T*) print, read in the sources (Bridge HEAD 067f987, Megatron-LM at
// the Bridge pin 2a75ac1, Transformer Engine release tags v1.12 … v2.18 and HEAD). Rules
// quote them so a user can match a finding to the failure they would otherwise meet in a
// log. Keep the wording byte-exact (including upstream typos): people grep logs for them.
// Where the text changed between Transformer Engine releases, each release range has its own.

export const BRIDGE_PR_2665 = "Bridge PR #2665";

export const UPSTREAM = {
  B1: "Sequence length must be divisible by 2 * context parallel size if context parallel is used.",
  B2: "When finetuning with CP>1, calculate_per_token_loss must be True",
  B3: "When finetuning with CP>1, average_in_collective must be False",
  B4: (n: number, layers: number) => `Length of cp_comm_type (${n}) must equal num_layers (${layers}).`,
  B5: (type: string) => `cp_comm_type must be a str or list of str, got ${type}.`,
  B6:
    "hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'. Without it, CP " +
    "communication is silently disabled and each rank attends only to its local chunk, producing artificially " +
    "high throughput but broken training. Example: for cp=16 across 4 nodes of 8 GPUs, set " +
    "hierarchical_context_parallel_sizes=[8, 2].",
  B7: (sizes: string, prod: number, cp: number) =>
    `Product of hierarchical_context_parallel_sizes ${sizes} (=${prod}) must equal context_parallel_size (=${cp}).`,
  // Upstream separates the two halves with a newline; findings are one line, so a space here.
  B8: (model: string, dataset: string) =>
    `Please ensure sequence length configuration in model config and dataset config match. ` +
    `Sequence length in model config: ${model}, Sequence length in dataset config: ${dataset}`,
  B11:
    "NotImplementedError: Decentralized process groups (use_decentralized_pg=True) do not support " +
    "hierarchical_context_parallel_sizes. Use cp_comm_type='a2a' or 'p2p' instead, or set " +
    "use_decentralized_pg=False to use the MPU path which supports 'a2a+p2p'.",
  M2: "Unsupported communication type for context parallelism!",
  M1: (n: number, layers: number) =>
    `Length of cp_comm_type (${n}) should equal to the total number of transformer layers (${layers})!`,
  M3: "DSAttention context parallelism currently supports cp_comm_type=allgather only.",
  // parallel_state.initialize_model_parallel (RuntimeError).
  M5: (world: number, model: number) => `world_size (${world}) is not divisible by ${model}`,
  M6: "Context parallelism is only supported by TEDotProductAttention!",
  // Upstream concatenates two literals without a space: "...to supporthierarchical cp commucation."
  M8: (version: string) => `Transformer-Engine v${version} must be >= 1.12.0 to supporthierarchical cp commucation.`,
  M11: "--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm",
  // megatron/training/arguments.py validate_args; the f-string prints `total_model_size=N`.
  MLM_WORLD: (world: number, model: number) => `world size (${world}) is not divisible by total_model_size (total_model_size=${model})`,
  M12: "seq-length should be a multiple of 2 * context-parallel-size if context-parallel-size > 1.",
  M13_PP: "Hybrid context parallelism not supported with pipeline parallelism",
  // TE 2.8 and later; 1.12 … 2.7 print T1_BEFORE_2_8.
  T1: "CP implementation a2a+p2p requires cp_group = [a2a_cp_group, p2p_cp_group]!",
  T1_BEFORE_2_8: "Current implementation only supports two-level CP groups!",
  T2: "thd format is not supported with hierarchical CP implementation yet!",
  T3: (bias: string) => `${bias} bias type is not supported with hierarchical CP implementation yet!`,
  // TE 2.12 and later format the value; 2.8 … 2.11 print the braces literally (no f prefix).
  T8: (type: string) => `Context parallelism does not support sliding window attention with cp_comm_type='${type}'!`,
  T8_2_8_TO_2_11: "Context parallelism does not support sliding window attention with {cp_comm_type=}!",
  T9: (softmax: string) => `Context parallelism only supports softmax_type='${softmax}' with cp_comm_type = 'a2a'!`,
  T9_2_8_TO_2_11: "Context parallelism only supports {softmax_type=} with cp_comm_type = 'a2a'!",
  T10: (hq: number, hkv: number, cp: number) =>
    `cp_comm_type='a2a' requires num_heads % cp_size == 0 for Q, K, V. Found num_heads_q = ${hq}, num_heads_kv = ${hkv}, cp_size = ${cp}.`,
  T12: (type: string) => `ValueError: Unsupported communication type: ${type}!`,
  // attn_forward_func_with_cp's MLA assertion (context_parallel.py): from 2.5 (#1729) to 2.14; 2.15 drops it (#2719).
  T13_2_5_TO_2_7: "The context parallel running configs cannot support MLA!",
  T13_2_8_TO_2_11: "Context parallelism does not support MLA with {cp_comm_type=}!",
  T13: (type: string) => `Context parallelism does not support MLA with cp_comm_type='${type}'!`,
} as const;

/** A message as one range of Transformer Engine releases prints it; `since` inclusive, `until` exclusive. */
export interface TeText {
  since: string;
  until?: string;
  text: string;
}

/** `"text"`, for quoting an upstream message inside a finding. */
export function quote(message: string): string {
  return `"${message}"`;
}
