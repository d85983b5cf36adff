# hcp-bot's torchrun launcher: `python -u -I -S launch.py TORCHRUN_ARGS...`, run by
# `hcp-bot smoke-run` in the checkout under test, in place of `python -m torch.distributed.run`.
#
# Why: `python -m` puts the working directory (the PR's checkout) first on sys.path, and
# `site` runs the .pth files and the sitecustomize of whatever is on the path (an editable
# install makes the checkout importable). Either way code of the PR would run in the launcher,
# before any rank exists, and could print a whole run's worth of lines. Here:
#   - `-I` (isolated): no working directory or script directory on sys.path, no PYTHON*
#     variables, no user site; `-S`: no `site` at all, so no .pth line and no sitecustomize runs.
#   - sys.path is rebuilt by hand: the runner's PYTHONPATH entries and the interpreter's (or
#     venv's) site-packages, plus the plain directory lines of their .pth files; never an entry
#     inside the checkout (except the venv's own site-packages, where `uv run` keeps it), never
#     the probe's folder, and no .pth `import` line is executed.
#   - torch.distributed.run is then run as __main__ from the torch found there; it refuses to
#     start when that torch lies in the checkout itself.
#   - the run's probe key arrives on fd 3 (a socket smoke-run wrote one key line per rank into).
#     It is moved to fd 0, the only descriptor besides stdout/stderr that torchrun's ranks
#     inherit (its Popen closes the others); each rank's probe reads exactly one line from it.
#     The launcher itself never reads it.
# Standard library only.

import os
import sys

_KEY_FD = 3
_TAG = "[hcp-bot launcher] "


def _inside(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _prefixes():
    """The venv (pyvenv.cfg beside or above the executable) and, where it says so, the base prefix."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    for folder in (exe_dir, os.path.dirname(exe_dir)):
        cfg = os.path.join(folder, "pyvenv.cfg")
        if not os.path.isfile(cfg):
            continue
        system = False
        with open(cfg, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    system = value.strip().lower() == "true"
        return [folder] + ([sys.base_prefix] if system else [])
    return [sys.prefix]


def _pth_dirs(site_dir):
    """The directory lines of SITE_DIR's .pth files (what `site` would add), without running any line."""
    try:
        names = sorted(n for n in os.listdir(site_dir) if n.endswith(".pth") and not n.startswith("."))
    except OSError:
        return []
    found = []
    for name in names:
        try:
            with open(os.path.join(site_dir, name), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                continue
            found.append(os.path.join(site_dir, line))
    return found


def _site_dirs(site):
    """A venv's lib/pythonX.Y/site-packages (its layout on every distro: Debian's patched
    getsitepackages would name dist-packages, since without `site` sys.prefix is not the venv),
    then the site-packages of any base prefix the venv includes."""
    prefixes = _prefixes()
    version = "python%d.%d" % sys.version_info[:2]
    dirs = []
    for prefix in prefixes:
        if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
            dirs += [os.path.join(prefix, lib, version, "site-packages") for lib in ("lib", "lib64")]
        else:
            dirs += site.getsitepackages([prefix])
    return dirs


def _search_path(checkout, probe_dir):
    """The runner's PYTHONPATH first (as Python orders it), then site-packages, then their .pth dirs."""
    import site

    def allowed(entry):
        entry = os.path.join(checkout, entry)  # a relative entry is the checkout's
        return os.path.isdir(entry) and not _inside(entry, probe_dir) and not _inside(entry, checkout)

    runner = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and allowed(p)]
    sites = [d for d in _site_dirs(site) if os.path.isdir(d)]
    pth = [d for s in sites for d in _pth_dirs(s) if allowed(d)]
    return runner + sites + pth


def _key_to_stdin():
    try:
        os.fstat(_KEY_FD)
    except OSError:
        return  # no key channel: the ranks' reports stay unsigned
    os.dup2(_KEY_FD, 0)
    os.close(_KEY_FD)


def main():
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        sys.dont_write_bytecode = True  # -I ignores the runner's PYTHON* settings; this one is harmless to honour
    checkout = os.getcwd()
    probe_dir = os.path.dirname(os.path.abspath(__file__))
    _key_to_stdin()
    sys.path[:] = [p for p in sys.path if p and not _inside(p, checkout)] + _search_path(checkout, probe_dir)
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("torch", sys.path)
    if spec is None or not spec.origin:
        sys.stderr.write(_TAG + "torch is not importable from the environment (outside the checkout): no run\n")
        return 1
    if _inside(spec.origin, checkout) and not any(_inside(spec.origin, p) for p in _prefixes()):
        sys.stderr.write(_TAG + "torch resolves inside the checkout (%s): refusing to launch it\n" % spec.origin)
        return 1
    import runpy

    runpy.run_module("torch.distributed.run", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
