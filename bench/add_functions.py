# ruff: noqa: E501 - long table rows
"""Where an add's wall time goes, by function, without a profiler (issue 12).

    python bench/add_functions.py [--size 100000] [--adds 4] [--code TREE]

bench/add_scale.py's build and adds (the same synthetic corpus and pre-made extractions
and vectors), in this process, with a wall clock around each of a few functions of the
region path (``FUNCTIONS``): their time summed over the adds after the first (the first
after a build fills what later adds keep), per add. Nested functions are inside their
callers' time. cProfile's overhead is per Python call, so it inflates Python-heavy steps
against numpy ones (``Resolver.advance`` read 124 ms profiled and is ~110 ms here, but a
dict loop it holds read ~3x its real cost); this adds one clock read per call of the few
functions wrapped. ``--code``: time another checkout (its ``graph`` is imported).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

#: (module, function or Class.method) timed
FUNCTIONS = (
    ("graph.region", "region_change"),
    ("graph.extract.incremental", "Resolver.advance"),
    ("graph.link", "shared_terms_region"),
    ("graph.link", "_SubIndex.__init__"),
    ("graph.link", "_TermIndex.partners"),
    ("graph.link", "_edges_from_lists"),
    ("graph.link", "_changes"),
    ("graph.link", "related_region"),
    ("graph.link", "_co_rows"),
    ("graph.link", "update_csls_pools"),
    ("graph.store.embedded", "EmbeddedStore.apply"),
    ("graph.store.embedded", "EmbeddedStore._commit"),
    ("graph.store.embedded", "EmbeddedStore._write_rows"),
    ("graph.build", "_next_corpus"),
)


def _wrap(module: str, name: str, spent: dict[str, float], on: dict[str, bool]) -> None:
    """Time ``module.name`` (a function or Class.method), also where another module of
    graph/ imported the function by name."""
    owner: Any = importlib.import_module(module)
    attr = name
    if "." in name:
        cls, attr = name.split(".")
        owner = getattr(owner, cls)
    if not hasattr(owner, attr):
        print(f"not in this checkout: {module}.{name}", file=sys.stderr)
        return
    f = getattr(owner, attr)

    @functools.wraps(f)
    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            if on["adds"]:
                spent[name] += time.perf_counter() - t

    setattr(owner, attr, timed)
    for mod_name, mod in list(sys.modules.items()):
        if mod_name.startswith("graph") and getattr(mod, attr, None) is f:
            setattr(mod, attr, timed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--adds", type=int, default=4, help="adds of 10 (the first is not counted)")
    ap.add_argument("--code", type=Path, default=None, help="a checkout to time (default: this one)")
    args = ap.parse_args()
    if args.adds < 2:
        ap.error("--adds must be at least 2: the first add is not counted")
    here = Path(__file__).resolve().parent
    code = (args.code or here.parent).resolve()
    os.environ["PYTHONPATH"] = str(code)  # add_scale's child puts it first on the path
    sys.path.insert(0, str(code))
    sys.path.insert(1, str(here))
    import add_scale

    for mod in ("graph.build", "graph.region", "graph.link", "graph.store.embedded",
                "graph.extract.incremental"):
        importlib.import_module(mod)
    spent: dict[str, float] = defaultdict(float)
    on = {"adds": False}
    for module, name in FUNCTIONS:
        _wrap(module, name, spent, on)
    from graph.build import Pipeline

    run = Pipeline.run
    calls = {"n": 0}

    def counted(self: Any, store: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        on["adds"] = calls["n"] >= 3  # 1: the build, 2: the first add
        t = time.perf_counter()
        try:
            return run(self, store, **kwargs)
        finally:
            if on["adds"]:
                spent["Pipeline.run (the whole add)"] += time.perf_counter() - t

    Pipeline.run = counted  # type: ignore[method-assign]
    work = Path(tempfile.mkdtemp(prefix="add-functions-"))
    res = add_scale._child(args.size, args.adds, work)
    timed_adds = args.adds - 1
    walls = " ".join(f"{a['wall']:.2f}" for a in res["adds"])
    print(f"code {code}; N {args.size}; build {res['build_s']:.1f} s; adds {walls} s "
          "(the first not counted)")
    print("| function | ms per add |")
    print("|---|---|")
    for name, s in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"| `{name}` | {1000 * s / timed_adds:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
