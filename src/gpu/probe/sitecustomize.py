# hcp-bot HCP probe, loaded as `sitecustomize` by every Python process of a smoke run.
#
# Why: Megatron-Core prints nothing when it builds the hierarchical context-parallel (HCP)
# groups, and PyTorch names them only with TORCH_CPP_LOG_LEVEL=INFO, only on NCCL, only at a
# group's first collective, and not at all under TORCH_DISTRIBUTED_DEBUG=DETAIL. So the smoke
# runner asks Megatron-Core directly.
#
# How:
#   1. `hcp-bot smoke-run` writes this file to a fresh temp dir and puts that dir first on
#      PYTHONPATH. Python's `site` module imports `sitecustomize` at start-up in every rank torchrun
#      spawns (they inherit the environment); not in the launcher, which runs without `site`.
#   2. At start-up it takes the run's secret (see "The key" below) and inserts a meta-path
#      finder (cheap, no imports of torch/megatron).
#   3. When something imports `megatron.core.parallel_state`, the finder lets the normal
#      finders locate the module, then wraps its loader: right after the module body ran, the
#      module's `initialize_model_parallel` is replaced by a wrapper. Code that later does
#      `from megatron.core.parallel_state import initialize_model_parallel` gets the wrapper.
#   4. The wrapper calls the original with the same arguments (its exceptions propagate
#      untouched: a failing init must fail the run as it would without us). After it returns,
#      each rank writes one line in the verdict parser's grammar (src/core/verdict/probe.ts):
#         HCP-PROBE {"v":2,"rank":0,"world_size":4,"hcp_sizes":[2,2],"cp_size":4,
#                    "levels":[{"level":0,"desc":"HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0","size":2,"ranks":[0,1]},...],
#                    "pid":123,"mac":"<64 hex>"}
#      with `"levels":null` when get_hierarchical_context_parallel_groups returns None (flat CP).
#      The line goes out in one os.write that starts with a newline: ranks share one pipe, so
#      the report must begin its own line and no other rank's output can land inside it.
#   5. Any probe error is caught. It becomes a report with an "error" field (the parser
#      counts it as "probe failed", never as evidence) plus a `[hcp-bot probe]` diagnostic line
#      on stderr. Nothing the probe does can raise into the training script.
#   6. A sitecustomize that was already on the path (a venv's or the distro's) would be
#      shadowed by this one, so it is looked up on the remaining sys.path entries and run too.
#
# The key (an HMAC-SHA256 key, new for every run): any code can print a line that looks like a
# report, so a report counts only with a MAC the runner can verify. The key is in no process's
# environment and no file at any time:
#   - smoke-run writes one key line per rank into a socket that becomes fd 3 of the launcher
#     (src/gpu/probe/launch.py, `python -I -S`: nothing of the checkout runs there, and this
#     file is not loaded there). The launcher moves it to fd 0, which torchrun's ranks inherit.
#   - HCP_PROBE_KEY_FD=0 (a marker, not the key) tells a rank's probe to read exactly one line
#     from fd 0; then fd 0 becomes /dev/null and the marker leaves os.environ, so the script and
#     its children find neither. The probe keeps only a keyed HMAC object.
#   - one line per rank: once every rank took its line the socket is empty, and smoke-run has
#     closed its end, so a later reader (a child, /proc/<launcher>/fd/0) gets nothing.
# What this cannot stop: code that runs inside a rank process, before this file (a .pth
# `import` line of an installed package) or after it (the script, a sitecustomize this file
# chains to), can read fd 0 or reach the HMAC object (gc, frames), and so sign reports; so can a
# ptrace of a rank, and, under `uv run`, code that runs before the launcher (a build backend, a
# torch the PR's lock points at). In-process evidence is only as trustworthy as the code that
# runs beside it. The runner reveals the key only after the whole run has exited.
#
# Python 3.8+; only the standard library at start-up.

import sys

_TARGET = "megatron.core.parallel_state"
_PREFIX = "HCP-PROBE "
_VERSION = 2
_KEY_FD_ENV = "HCP_PROBE_KEY_FD"
# Variables an older runner (or anyone) might set: never a key source, and never left visible.
_STALE_ENV = ("HCP_PROBE_KEY", "HCP_PROBE_KEY_FILE")
_KEY_LINE = 65  # 64 hex digits and a newline
# What the MAC covers besides the report's JSON text (the verifier prepends the same bytes).
_MAC_CONTEXT = b"hcp-probe-report/v2\n"

# The keyed HMAC of this process (an object, never the key itself), or None: reports unsigned.
_signer = [None]


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


def _key_from_hex(text):
    text = (text or "").strip()
    if len(text) != 64:
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def _key_channel(fd):
    """True when FD is a socket or pipe (smoke-run's key channel), never a terminal or a file."""
    import os
    import stat

    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode)


def _read_key_line(fd):
    """One read of one line: ranks share the channel, so a rank never reads past its own line."""
    import os

    data = os.read(fd, _KEY_LINE)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, fd)  # the script's stdin is /dev/null, as before the run had a key
    finally:
        os.close(devnull)
    return data.decode("ascii", "replace")


def _take_key():
    """Rank: one key line from the channel smoke-run opened, into a keyed HMAC object."""
    import os

    for name in _STALE_ENV:
        os.environ.pop(name, None)
    marker = os.environ.pop(_KEY_FD_ENV, None)
    if marker is None:
        return
    try:
        fd = int(marker)
    except ValueError:
        _diag("%s is not a descriptor number; reports stay unsigned" % _KEY_FD_ENV)
        return
    if not _key_channel(fd):
        _diag("no key channel on fd %d; reports stay unsigned" % fd)
        return
    text = _read_key_line(fd)
    key = _key_from_hex(text)
    if key is None:
        _diag("no key arrived for this process (%d bytes); reports stay unsigned" % len(text))
        return
    import hashlib
    import hmac

    _signer[0] = hmac.new(key, _MAC_CONTEXT, hashlib.sha256)
    del text, key


def _signed(body):
    """The report's JSON text with "mac" as its last member, or unchanged without a key."""
    signer = _signer[0]
    if signer is None:
        return body
    mac = signer.copy()
    mac.update(body.encode("ascii"))
    return body[:-1] + ',"mac":"' + mac.hexdigest() + '"}'


def _write_line(text):
    """One os.write that starts with a newline: the report begins its own line, whole."""
    import os

    try:
        sys.stdout.flush()  # what the script printed before comes first
    except Exception:
        pass
    data = ("\n" + text + "\n").encode("ascii")
    while data:
        data = data[os.write(1, data):]


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
    import os

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
    report["pid"] = os.getpid()
    _write_line(_PREFIX + _signed(json.dumps(report, separators=(",", ":"))))


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
        _take_key()
    except Exception as e:
        _diag("could not take the run's key (%s: %s); reports stay unsigned" % (type(e).__name__, e))
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
