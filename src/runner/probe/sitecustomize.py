# hcp-bot HCP probe, loaded as `sitecustomize` by every Python process of a smoke run.
#
# Why: Megatron-Core prints nothing when it builds the hierarchical context-parallel (HCP)
# groups, and PyTorch names them only with TORCH_CPP_LOG_LEVEL=INFO, only on NCCL, only at a
# group's first collective, and not at all under TORCH_DISTRIBUTED_DEBUG=DETAIL. So the smoke
# runner asks Megatron-Core directly.
#
# How:
#   1. `hcp-bot smoke-run` writes this file to a fresh temp dir and puts that dir first on
#      PYTHONPATH. Python's `site` module imports `sitecustomize` at start-up, in the torchrun
#      launcher and in every rank it spawns (they inherit the environment).
#   2. At start-up it only inserts a meta-path finder (cheap, no imports of torch/megatron).
#   3. When something imports `megatron.core.parallel_state`, the finder lets the normal
#      finders locate the module, then wraps its loader: right after the module body ran, the
#      module's `initialize_model_parallel` is replaced by a wrapper. Code that later does
#      `from megatron.core.parallel_state import initialize_model_parallel` gets the wrapper.
#   4. The wrapper calls the original with the same arguments (its exceptions propagate
#      untouched: a failing init must fail the run as it would without us). After it returns,
#      each rank prints one line in the verdict parser's grammar (src/core/verdict/probe.ts):
#         HCP-PROBE {"v":1,"rank":0,"world_size":4,"cp_size":4,"hcp_sizes":[2,2],
#                    "levels":[{"level":0,"desc":"HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0","size":2,"ranks":[0,1]},...]}
#      with `"levels":null` when get_hierarchical_context_parallel_groups returns None (flat CP).
#   5. Any probe error is caught. It becomes a report with an "error" field (the parser
#      counts it as "probe failed", never as evidence) plus a `[hcp-bot probe]` diagnostic line
#      on stderr. Nothing the probe does can raise into the training script.
#   6. A sitecustomize that was already on the path (a venv's or the distro's) would be
#      shadowed by this one, so it is looked up on the remaining sys.path entries and run too.
#
# Python 3.8+; only the standard library at start-up.

import sys

_TARGET = "megatron.core.parallel_state"
_PREFIX = "HCP-PROBE "
_VERSION = 1


def _diag(message):
    # Starts with "[" so the verdict parser never mistakes it for a Python exception line.
    try:
        sys.stderr.write("[hcp-bot probe] " + str(message) + "\n")
        sys.stderr.flush()
    except Exception:
        pass


def _env_int(name):
    import os

    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


def _dist():
    """torch.distributed when it is initialized, else None (rank/world then come from env)."""
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist
    except Exception:
        pass
    return None


def _rank_and_world(dist):
    if dist is not None:
        try:
            return dist.get_rank(), dist.get_world_size()
        except Exception:
            pass
    return _env_int("RANK"), _env_int("WORLD_SIZE")


def _group_ranks(dist, group):
    if dist is None:
        return None
    try:
        return [int(r) for r in dist.get_process_group_ranks(group)]
    except Exception:
        return None


def _level(dist, index, group):
    entry = {"level": index, "desc": getattr(group, "group_desc", None), "size": int(group.size())}
    if not isinstance(entry["desc"], str):
        entry["desc"] = None
    ranks = _group_ranks(dist, group)
    if ranks is not None:
        entry["ranks"] = ranks
    return entry


def _int_list(value):
    if value is None:
        return None
    try:
        return [int(x) for x in value]
    except Exception:
        return None


def _requested_sizes(original, args, kwargs):
    """hierarchical_context_parallel_sizes as the caller passed it (keyword or positional)."""
    try:
        import inspect

        bound = inspect.signature(original).bind_partial(*args, **kwargs).arguments
        return _int_list(bound.get("hierarchical_context_parallel_sizes"))
    except Exception:
        return _int_list(kwargs.get("hierarchical_context_parallel_sizes"))


def _report(module, sizes):
    import json

    dist = _dist()
    rank, world = _rank_and_world(dist)
    report = {"v": _VERSION, "rank": rank if isinstance(rank, int) and rank >= 0 else 0}
    if isinstance(world, int) and world > 0:
        report["world_size"] = world
    if sizes is not None:
        report["hcp_sizes"] = sizes
    try:
        cp = int(module.get_context_parallel_world_size())
        if cp > 0:
            report["cp_size"] = cp
    except Exception:
        pass  # optional field; the levels below are what matters
    try:
        groups = module.get_hierarchical_context_parallel_groups(check_initialized=False)
        report["levels"] = None if groups is None else [_level(dist, i, g) for i, g in enumerate(groups)]
    except Exception as e:  # the report then proves nothing; the run goes on
        report["levels"] = None
        report["error"] = "%s: %s" % (type(e).__name__, e)
        _diag("rank %s: could not read the HCP groups (%s: %s); training continues" % (report["rank"], type(e).__name__, e))
    line = _PREFIX + json.dumps(report, separators=(",", ":"))
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _wrap_initialize(module):
    original = getattr(module, "initialize_model_parallel", None)
    if original is None or getattr(original, "_hcp_bot_probe", False):
        return
    import functools

    @functools.wraps(original)
    def initialize_model_parallel(*args, **kwargs):
        result = original(*args, **kwargs)  # errors here are the run's own: never caught
        try:
            _report(module, _requested_sizes(original, args, kwargs))
        except Exception as e:
            _diag("report failed (%s: %s); training continues" % (type(e).__name__, e))
        return result

    initialize_model_parallel._hcp_bot_probe = True
    module.initialize_model_parallel = initialize_model_parallel


class _ParallelStateFinder(object):
    """Meta-path finder that only decorates the loader of megatron.core.parallel_state."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        try:
            spec = self._real_spec(fullname, path, target)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            _decorate_loader(spec.loader)
            return spec
        except Exception as e:
            _diag("import hook failed (%s: %s); no probe report" % (type(e).__name__, e))
            return None  # the normal finders take over

    def _real_spec(self, fullname, path, target):
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, _ParallelStateFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
        return None


def _decorate_loader(loader):
    original_exec = loader.exec_module
    if getattr(original_exec, "_hcp_bot_probe", False):
        return

    def exec_module(module):
        original_exec(module)  # the module's own import errors propagate
        if getattr(module, "__name__", None) != _TARGET:
            return  # a loader shared with other modules: leave them alone
        try:
            _wrap_initialize(module)
        except Exception as e:
            _diag("could not wrap initialize_model_parallel (%s: %s)" % (type(e).__name__, e))

    exec_module._hcp_bot_probe = True
    try:
        loader.exec_module = exec_module  # per-module loader instance (SourceFileLoader)
    except Exception as e:
        _diag("could not hook the loader (%s: %s)" % (type(e).__name__, e))


def _chain_next_sitecustomize():
    """Run the sitecustomize this file shadows, if any (venvs and distros ship their own)."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if p and os.path.abspath(p) != here]
    try:
        from importlib.machinery import PathFinder
        import importlib.util

        spec = PathFinder.find_spec("sitecustomize", others)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:
        _diag("the shadowed sitecustomize failed (%s: %s)" % (type(e).__name__, e))


def _install():
    try:
        existing = sys.modules.get(_TARGET)
        if existing is not None:
            _wrap_initialize(existing)
        elif not any(isinstance(f, _ParallelStateFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, _ParallelStateFinder())
    except Exception as e:
        _diag("install failed (%s: %s); no probe report" % (type(e).__name__, e))
    _chain_next_sitecustomize()


_install()
