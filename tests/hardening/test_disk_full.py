"""A disk that fills up: a write fails with a clear error and changes nothing; the same
write works once there is room again.

An outside probe (docs/reliability.md, probe 7) filled a small tmpfs holding the data
folder at many points of `add`, `build`, `remove` and a server's `addPapers`: no failed
write changed the graph. But a running server answered an `addPapers` on a disk 100%
full with INTERNAL_SERVER_ERROR and a traceback in its log (writing the holder's pid
into `graph.db.lock` raised a bare OSError), and a write that failed for a full disk was
coded BAD_REQUEST, as if the client's input were at fault. Here, on a real tmpfs (root
only: elsewhere the tests are skipped, saying why): the CLI's add and the server's
`addPapers` on a full disk, then the same once the space is freed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.load import start_server
from graph.build import graphs_equal
from graph.model import GraphData, NodeKind, Paper
from graph.store.embedded import EmbeddedStore
from tests.support.seeds import ROOT, SEEDS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tmpfs is Linux's"),
]

API_KEY = "disk-full-key-8c1d"
RUN_TIMEOUT = 180
ADD = "mutation($p: [PaperInput!]!) { addPapers(input: $p) { added } }"


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    env.pop("CITEGRAPH_STORE", None)
    return env


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "citegraph", "--data-dir", str(data), *args],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False,
    )


def _load(data: Path) -> GraphData:
    store = EmbeddedStore(data / "graph.db")
    try:
        return store.snapshot()
    finally:
        store.close()


def _papers(data: GraphData) -> set[str]:
    return {nid for nid, n in data.nodes.items() if isinstance(n, Paper)}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MiB tmpfs, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where = tmp_path / "small"
    where.mkdir()
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)],
                         capture_output=True, text=True, check=False)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {got.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path) -> Path:
    """A file taking every free byte of ``disk``."""
    filler = disk / "FILLER"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        free = shutil.disk_usage(disk).free
        if free > 0:
            os.posix_fallocate(fd, 0, free)
        os.lseek(fd, 0, os.SEEK_END)
        with contextlib.suppress(OSError):  # whatever block rounding left
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)
    assert shutil.disk_usage(disk).free < 4096
    return filler


def _batch(path: Path, prefix: str, n: int) -> frozenset[str]:
    from graph.ingest import read_text

    abstracts = [p.abstract for p in read_text(sorted(SEEDS.glob("*.txt"))[0]).papers[:n]]
    rows = [{"id": f"{prefix}{i}", "abstract": f"{a} We also release the {prefix}{i} kit."}
            for i, a in enumerate(abstracts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return frozenset(r["id"] for r in rows)


def test_an_add_on_a_full_disk_fails_clearly_and_changes_nothing(
    hard_seed_dir: Path, small_disk: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    ids = _batch(batch, "full-disk-", 3)
    # the same add on a roomy copy: the graph to expect, and a cache holding the batch's
    # vectors (the add on the full disk then loads no model). Without the session's cache,
    # a copy of what every test so far embedded and extracted: it may not fit the disk.
    roomy = tmp_path / "roomy"
    shutil.copytree(hard_seed_dir, roomy, ignore=shutil.ignore_patterns("cache"))
    done = _cli(roomy, "add", str(batch))
    assert done.returncode == 0, done.stderr[-1500:]
    data = small_disk / "data"
    shutil.copytree(hard_seed_dir, data, ignore=shutil.ignore_patterns("cache"))
    shutil.copytree(roomy / "cache", data / "cache")
    before = _load(data)
    filler = _fill(small_disk)
    failed = _cli(data, "add", str(batch))
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0, out[-1500:]
    assert "Traceback" not in out, out[-3000:]
    assert "full" in out or "space" in out, out[-1500:]
    filler.unlink()
    assert graphs_equal(_load(data), before) == []  # nothing of the failed add
    again = _cli(data, "add", str(batch))
    assert again.returncode == 0, again.stderr[-1500:]
    assert _papers(_load(data)) == _papers(before) | ids
    assert graphs_equal(_load(data), _load(roomy)) == []


def test_add_papers_on_a_full_disk_says_the_store_failed_and_keeps_serving(
    hard_seed_dir: Path, small_disk: Path
) -> None:
    data = small_disk / "data"
    shutil.copytree(hard_seed_dir, data, ignore=shutil.ignore_patterns("cache"))
    before = _papers(_load(data))
    row = {"id": "full-disk-api-1", "abstract": "We study citation graphs of machine "
           "learning papers and release a benchmark of linked abstracts for retrieval."}
    server = start_server(data, {"CITEGRAPH_API_KEY": API_KEY})  # the model loaded first
    try:
        with httpx.Client(base_url=server.url, timeout=60,
                          headers={"X-API-Key": API_KEY}) as client:
            filler = _fill(small_disk)
            r = client.post("/graphql", json={"query": ADD, "variables": {"p": [row]}})
            body = r.json()
            assert body.get("errors"), body
            error = body["errors"][0]
            assert error["extensions"]["code"] == "STORE_WRITE_FAILED", (body, server.log_tail())
            assert "nothing was written" in error["message"] and "full" in error["message"], body
            stats = client.post("/graphql", json={"query": "{ stats { nodes { kind count } } }"})
            counts = {c["kind"]: c["count"] for c in stats.json()["data"]["stats"]["nodes"]}
            assert counts[NodeKind.PAPER.value] == len(before)  # still serving the old graph
            filler.unlink()
            r = client.post("/graphql", json={"query": ADD, "variables": {"p": [row]}})
            assert r.json().get("data", {}).get("addPapers") == {"added": [row["id"]]}, r.json()
    finally:
        server.stop()
    assert "Traceback" not in server.log_tail(20000)
    assert _papers(_load(data)) == before | {row["id"]}
