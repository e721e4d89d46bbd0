"""A server's warm-up hands its long-lived heap to ``gc.freeze()`` and enlarges the young
generation, once per process.

Run in a child process: freezing is process-wide, and the test process must keep its
own collector as it was.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from api.services import GC_YOUNG_THRESHOLD

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import gc, json, sys
    from pathlib import Path

    from api.services import Services
    from graph.errors import StoreUnavailableError
    from graph.model import GraphChange, Paper
    from graph.settings import Settings
    from graph.store.memory import NetworkxStore

    tmp = Path(sys.argv[1])
    out = {}

    def down(_settings):
        raise StoreUnavailableError("down for this test")

    settings = Settings(data_dir=tmp / "a", query_encoder="stock")
    services = Services(settings, opener=down)
    services.open()
    services.warm_up()  # the graph was never read: nothing to freeze yet
    out["store_down"] = gc.get_freeze_count()
    services.close()

    store = NetworkxStore()
    store.apply(GraphChange(upsert_nodes=tuple(
        Paper(f"p{i}", f"Paper {i}", "an abstract", f"h{i}") for i in range(50))))
    services = Services(settings.model_copy(update={"data_dir": tmp / "b"}),
                        opener=lambda _s: store)
    services.open()
    before = [[]]  # made before the warm-up: frozen with the rest
    services.warm_up()
    out["warm"] = gc.get_freeze_count()
    out["threshold"] = gc.get_threshold()[0]
    out["graph_frozen"] = not any(o is store.g._node for o in gc.get_objects())
    out["before_frozen"] = gc.is_tracked(before) and not any(
        o is before for o in gc.get_objects())
    services.close()

    again = Services(settings.model_copy(update={"data_dir": tmp / "c"}),
                     opener=lambda _s: NetworkxStore())
    again.open()
    after = [[]]  # made after the first freeze: a second warm-up must leave it be
    again.warm_up()
    out["after_frozen"] = not any(o is after for o in gc.get_objects())
    again.close()
    print(json.dumps(out))
    """
)


def test_warm_up_freezes_the_heap_once_and_only_once_the_graph_was_read(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["store_down"] == 0
    assert out["warm"] > 10_000  # the model, the graph and the rest of the warm heap
    assert out["graph_frozen"]  # the graph's own dicts no longer in any generation
    assert out["before_frozen"]
    assert out["threshold"] == GC_YOUNG_THRESHOLD
    assert not out["after_frozen"]  # a second app in the same process froze nothing more
