// Failure signatures the verdict recognises in a log line, from docs/domain.md sections 3 and
// 4.3. Each entry is a fragment of the exact upstream text (not the whole message: values such
// as sizes, CP or head counts are interpolated upstream), mapped to a cause kind and, where the
// analyzer has one, the rule that would have caught the mistake before the run.
import type { CauseKind } from "./schema.ts";

export interface Signature {
  /** Upstream id from docs/domain.md section 3 (B6, M8, T1, …) or a short name. */
  id: string;
  kind: CauseKind;
  ruleId?: string;
  /** Every fragment must occur in the line (case-sensitive, like the upstream strings). */
  all: readonly string[];
  /** Lower runs first: more specific signatures win over generic ones. */
  order?: number;
}

export const SIGNATURES: readonly Signature[] = [
  // Megatron-Bridge ConfigContainer.validate / initialize (docs/domain.md 3.1)
  { id: "B6", kind: "config-assertion", ruleId: "HCP001", all: ["hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'"] },
  { id: "B7", kind: "config-assertion", ruleId: "HCP002", all: ["Product of hierarchical_context_parallel_sizes", "must equal context_parallel_size"] },
  { id: "B11", kind: "config-assertion", ruleId: "HCP006", all: ["Decentralized process groups (use_decentralized_pg=True) do not support hierarchical_context_parallel_sizes"] },
  { id: "B1", kind: "config-assertion", ruleId: "HCP007", all: ["Sequence length must be divisible by 2 * context parallel size"] },
  { id: "B9", kind: "config-assertion", ruleId: "HCP007", all: ["seq_length must be divisible by the CP/SP collate padding multiple"] },
  { id: "B8", kind: "config-assertion", ruleId: "HCP008", all: ["Please ensure sequence length configuration in model config and dataset config match"] },
  { id: "B2", kind: "config-assertion", ruleId: "HCP022", all: ["When finetuning with CP>1, calculate_per_token_loss must be True"] },
  { id: "B3", kind: "config-assertion", ruleId: "HCP022", all: ["When finetuning with CP>1, average_in_collective must be False"] },
  { id: "B4", kind: "config-assertion", ruleId: "HCP012", all: ["Length of cp_comm_type (", "must equal num_layers"] },
  { id: "B5", kind: "config-assertion", ruleId: "HCP013", all: ["cp_comm_type must be a str or list of str"] },
  { id: "B10", kind: "config-assertion", all: ["Gloo process groups are not supported when use_decentralized_pg=True"] },
  { id: "B12", kind: "config-assertion", ruleId: "HCP017", all: ["world_size (", ") is not divisible by"] },
  // Megatron-Core / Megatron-LM (docs/domain.md 3.2)
  { id: "M1", kind: "config-assertion", ruleId: "HCP012", all: ["should equal to the total number of transformer layers"] },
  { id: "M2", kind: "config-assertion", ruleId: "HCP013", all: ["Unsupported communication type for context parallelism!"] },
  { id: "M3", kind: "config-assertion", ruleId: "HCP013", all: ["DSAttention context parallelism currently supports cp_comm_type=allgather only"] },
  { id: "M6", kind: "config-assertion", ruleId: "HCP016", all: ["Context parallelism is only supported by TEDotProductAttention!"] },
  { id: "M7", kind: "config-assertion", all: ["Only Transformer-Engine version >= 1.0.0 supports context parallelism!"] },
  // Upstream typo kept: "...to supporthierarchical cp commucation."
  { id: "M8", kind: "config-assertion", ruleId: "HCP014", all: ["must be >= 1.12.0 to support"] },
  { id: "M9", kind: "config-assertion", ruleId: "HCP006", all: ["pg_collection must have hierarchical cp pg"] },
  { id: "M11", kind: "config-assertion", ruleId: "HCP001", all: ["--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm"] },
  { id: "M12", kind: "config-assertion", ruleId: "HCP007", all: ["seq-length should be a multiple of 2 * context-parallel-size"] },
  { id: "M13", kind: "config-assertion", ruleId: "HCP021", all: ["Hybrid context parallelism not supported with pipeline parallelism"] },
  // Transformer Engine attn_forward_func_with_cp (docs/domain.md 3.3)
  // T1 has two wordings: TE 2.8+ "CP implementation a2a+p2p requires cp_group = [a2a_cp_group,
  // p2p_cp_group]!" (context_parallel.py; MultiheadAttention says "cp_comm_type = a2a+p2p requires …"),
  // TE 1.12 … 2.7 "Current implementation only supports two-level CP groups!".
  { id: "T1", kind: "te-assertion", ruleId: "HCP003", all: ["requires cp_group = [a2a_cp_group, p2p_cp_group]!"] },
  { id: "T1", kind: "te-assertion", ruleId: "HCP003", all: ["Current implementation only supports two-level CP groups!"] },
  { id: "T2", kind: "te-assertion", ruleId: "HCP010", all: ["format is not supported with hierarchical CP implementation yet!"] },
  { id: "T3", kind: "te-assertion", ruleId: "HCP011", all: ["bias type is not supported with hierarchical CP implementation yet!"] },
  { id: "T5", kind: "te-assertion", all: ["type for cp_comm_type=", "cp_group must be"] },
  { id: "T6", kind: "te-assertion", all: ["Context parallelism does not support qkv_format="] },
  { id: "T7", kind: "te-assertion", all: ["Context parallelism does not support FlashAttention backend with qkv_format"] },
  { id: "T8", kind: "te-assertion", ruleId: "HCP011", all: ["Context parallelism does not support sliding window attention"] },
  { id: "T9", kind: "te-assertion", ruleId: "HCP011", all: ["Context parallelism only supports softmax_type="] },
  { id: "T10", kind: "te-assertion", ruleId: "HCP009", all: ["requires num_heads % cp_size == 0"] },
  { id: "T11", kind: "te-assertion", ruleId: "HCP007", all: ["requires seq_len % 2 == 0"] },
  { id: "T12", kind: "te-assertion", ruleId: "HCP013", all: ["Unsupported communication type: "] },
  { id: "T13", kind: "te-assertion", all: ["No dot product attention backend is available for the provided inputs"] },
  // Hydra / run_recipe argument parsing (docs/domain.md 2.1, 4.3)
  { id: "hydra", kind: "hydra-override", all: ["Failed to parse Hydra overrides"] },
  { id: "hydra-form", kind: "hydra-override", all: ["Expected override in KEY=VALUE form"] },
  { id: "hydra-error", kind: "hydra-override", all: ["OverridesError"], order: 5 },
  // CUDA OOM (torch.OutOfMemoryError, older torch.cuda.OutOfMemoryError, raw CUDA error)
  { id: "oom", kind: "cuda-oom", all: ["CUDA out of memory"] },
  { id: "oom-error", kind: "cuda-oom", all: ["OutOfMemoryError"], order: 5 },
  { id: "oom-cuda", kind: "cuda-oom", all: ["CUDA error: out of memory"] },
  // NCCL / c10d (docs/domain.md 4.3; o_nccl_timeout_cppinfo.log)
  { id: "nccl-watchdog-timeout", kind: "nccl", all: ["Watchdog caught collective operation timeout"] },
  { id: "nccl-watchdog", kind: "nccl", all: ["detected by watchdog"], order: 5 },
  { id: "nccl-watchdog-exit", kind: "nccl", all: ["Process group watchdog thread terminated with exception"], order: 5 },
  { id: "nccl-dist-backend", kind: "nccl", all: ["DistBackendError"], order: 6 },
  { id: "nccl-error", kind: "nccl", all: ["NCCL error"], order: 6 },
  { id: "nccl-internal", kind: "nccl", all: ["ncclInternalError"], order: 6 },
  { id: "nccl-system", kind: "nccl", all: ["ncclSystemError"], order: 6 },
  { id: "nccl-cuda", kind: "nccl", all: ["ncclUnhandledCudaError"], order: 6 },
  { id: "nccl-remote", kind: "nccl", all: ["ncclRemoteError"], order: 6 },
  // NaN detection in MCore (docs/domain.md 4.3)
  { id: "nan-grad", kind: "nan-loss", all: ["found NaN in local grad norm"] },
  { id: "nan-forward", kind: "nan-loss", all: ["found NaN in local forward loss"] },
  { id: "nan-result", kind: "nan-loss", all: ["Unexpected result nan"] },
];

/**
 * Quick gate before the catalogue: a line matching no signature almost always lacks all of
 * these words, so most examined lines cost one regex test, not ~50 substring searches.
 */
export const SIGNATURE_GATE =
  /Error|error|assert|must|support|should|Unsupported|Expected override|atchdog|NaN|nan|out of memory|Please ensure|Length of|is not divisible|requires/;

const ORDERED = [...SIGNATURES].sort((a, b) => (a.order ?? 0) - (b.order ?? 0));

export function matchSignature(text: string): Signature | undefined {
  if (!SIGNATURE_GATE.test(text)) return undefined;
  for (const sig of ORDERED) if (sig.all.every((f) => text.includes(f))) return sig;
  return undefined;
}

/** Dense BF16 peak per GPU (TFLOP/s, no sparsity), from the vendors' datasheets. */
export const DENSE_BF16_PEAK_TFLOPS: Readonly<Record<string, number>> = {
  A100: 312,
  H20: 148,
  H100: 989,
  H200: 989,
  H800: 989,
  B200: 2250,
  B300: 2250,
  GB200: 2500,
  GB300: 2500,
};

/** "h100-sxm", "NVIDIA H200", "GB200 NVL72" → the table key; undefined when unknown. */
export function normaliseGpu(name: string): string | undefined {
  const upper = name.toUpperCase();
  // Longest keys first so "GB200" is not read as "B200".
  const keys = Object.keys(DENSE_BF16_PEAK_TFLOPS).sort((a, b) => b.length - a.length);
  return keys.find((k) => new RegExp(`(^|[^A-Z0-9])${k}([^0-9]|$)`).test(upper));
}

/** Rule ids by cause kind for the failures the catalogue cannot see (bare asserts). */
export const M4_RULE = { upstream: "M4", ruleId: "HCP002" } as const;
