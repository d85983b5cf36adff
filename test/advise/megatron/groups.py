"""Prints the process groups Megatron-Core's initialize_model_parallel builds, one JSON line per rank.

Launched by torchrun (backend gloo, CPU only). Settings from the environment:
  TP, PP, CP      tensor / pipeline / context parallel sizes (default 1)
  HCP_SIZES       e.g. "2,2"; empty = flat CP
  MCORE_DIR       the folder holding megatron/core (default ./vendor next to this file)
Each rank prints `MEGATRON-GROUPS {json}` with the global ranks of its TP, CP, DP and PP groups
and of each hierarchical CP level, read back from torch with get_process_group_ranks.
"""
import json
import os
import sys
import types

MCORE_DIR = os.environ.get("MCORE_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor")

import torch.distributed as dist


def import_parallel_state():
    """megatron.core.parallel_state without megatron/core/__init__.py (it imports far more than the groups need)."""
    sys.path.insert(0, MCORE_DIR)
    try:
        from megatron.core import parallel_state

        return parallel_state
    except Exception as error:  # noqa: BLE001 - fall back to the module alone
        print(f"[groups] full import failed ({type(error).__name__}: {error}); importing parallel_state alone", file=sys.stderr)
        for name in [n for n in sys.modules if n == "megatron" or n.startswith("megatron.")]:
            del sys.modules[name]
        for name, sub in (("megatron", "megatron"), ("megatron.core", os.path.join("megatron", "core"))):
            module = types.ModuleType(name)
            module.__path__ = [os.path.join(MCORE_DIR, sub)]
            sys.modules[name] = module
        import megatron.core.parallel_state as parallel_state

        return parallel_state


def ranks_of(group):
    return None if group is None else list(dist.get_process_group_ranks(group))


def main():
    tp, pp, cp = (int(os.environ.get(k, "1")) for k in ("TP", "PP", "CP"))
    text = os.environ.get("HCP_SIZES", "").strip()
    sizes = [int(x) for x in text.split(",")] if text else None
    dist.init_process_group(backend="gloo")
    ps = import_parallel_state()
    ps.initialize_model_parallel(
        tensor_model_parallel_size=tp,
        pipeline_model_parallel_size=pp,
        context_parallel_size=cp,
        hierarchical_context_parallel_sizes=sizes,
    )
    hcp = ps.get_hierarchical_context_parallel_groups(check_initialized=False)
    report = {
        "rank": dist.get_rank(),
        "world_size": dist.get_world_size(),
        "tp_size": tp,
        "pp_size": pp,
        "cp_size": cp,
        "hcp_sizes": sizes,
        "tp": ranks_of(ps.get_tensor_model_parallel_group()),
        "cp": ranks_of(ps.get_context_parallel_group()),
        "dp": ranks_of(ps.get_data_parallel_group()),
        "pp": ranks_of(ps.get_pipeline_model_parallel_group()),
        "hcp": None if hcp is None else [ranks_of(g) for g in hcp],
    }
    print("MEGATRON-GROUPS " + json.dumps(report, separators=(",", ":")), flush=True)
    ps.destroy_model_parallel()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
