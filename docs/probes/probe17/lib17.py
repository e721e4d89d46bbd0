"""Shared helpers for probe 17: a server on a data dir, GraphQL calls, CLI runs, an
expected-corpus model, and the rebuild comparison.

Everything runs the clone's code: PYTHONPATH must point at the probe clone.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PY = sys.executable
KEY = "k"
sys.path.insert(0, str(HERE))
import compare  # noqa: E402

from graph.ids import id_key, strip_id  # noqa: E402


def env(**extra):
    e = dict(os.environ)
    e.update(HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO), CITEGRAPH_API_KEY=KEY)
    e.update({k: str(v) for k, v in extra.items()})
    return e


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


class Server:
    def __init__(self, data_dir, port, logfile, extra_env=None, workers=None):
        self.data_dir, self.port = Path(data_dir), port
        self.logf = open(logfile, "ab")
        workers = workers or int(os.environ.get("P17_WORKERS", "1"))
        self.proc = subprocess.Popen(
            [PY, "-m", "citegraph", "-v", "--data-dir", str(data_dir), "serve", "--host",
             "127.0.0.1", "--port", str(port), *(["--workers", str(workers)] if workers > 1 else [])],
            stdout=self.logf, stderr=subprocess.STDOUT, env=env(**(extra_env or {})),
            cwd=str(REPO), start_new_session=True)
        self.pid = self.proc.pid
        log(f"server pid {self.pid} on port {port} for {data_dir}")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_ready(self, timeout=600):
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.url("/readyz"), timeout=5) as r:
                    if r.status == 200:
                        log(f"server ready after {time.time()-t0:.1f}s")
                        return time.time() - t0
            except Exception:
                pass
            time.sleep(0.5)
        raise RuntimeError("server not ready")

    def gql(self, query, variables=None, key=True, timeout=300):
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        req = urllib.request.Request(self.url("/graphql"), data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              **({"X-API-Key": KEY} if key else {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return {"http_error": e.code, "body": e.read().decode(errors="replace")[:2000]}

    def rss_kb(self):
        try:
            for line in open(f"/proc/{self.pid}/status"):
                if line.startswith("VmRSS"):
                    return int(line.split()[1])
        except FileNotFoundError:
            return None

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait(10)
        log(f"server pid {self.pid} stopped rc={self.proc.returncode}")
        self.logf.close()


ADD = """mutation($p:[PaperInput!]!){ addPapers(input:$p){ added removed updated duplicates
 nodesWritten edgesWritten nodesDeleted edgesDeleted problems } }"""
REMOVE = """mutation($id:ID!){ removePaper(id:$id){ added removed updated duplicates
 nodesWritten edgesWritten nodesDeleted edgesDeleted problems } }"""
PAPER = """query($id:ID!){ paper(id:$id){ key abstract title } }"""
STATS = """{ stats { totalNodes totalEdges nodes { kind count } edges { kind count } } }"""


def cli(data_dir, *args, timeout=900, extra_env=None):
    t0 = time.time()
    p = subprocess.run([PY, "-m", "citegraph", "--data-dir", str(data_dir), *args],
                       capture_output=True, text=True, env=env(**(extra_env or {})),
                       cwd=str(REPO), timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.time() - t0


def write_jsonl(path, recs):
    with open(path, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


class Expect:
    """The corpus the writes should leave: id_key -> (stored spelling, record)."""

    FIELDS = ("title", "url", "keywords", "abstract", "references", "authors", "venue", "year")

    def __init__(self, base):
        self.papers = {}
        for r in base:
            self.papers[id_key(r["id"])] = (strip_id(r["id"]), dict(r))

    def add(self, rec):
        k = id_key(rec["id"])
        if k in self.papers:
            spelling, old = self.papers[k]
            new = dict(old)
            for f in self.FIELDS:
                if rec.get(f) not in (None, "", []):
                    new[f] = rec[f]
            new["id"] = spelling
            self.papers[k] = (spelling, new)
        else:
            r = dict(rec)
            r["id"] = strip_id(rec["id"])
            self.papers[k] = (r["id"], r)

    def remove(self, ref):
        del self.papers[id_key(ref)]

    def has(self, ref):
        return id_key(ref) in self.papers

    def record(self, ref):
        return self.papers[id_key(ref)][1]

    def records(self):
        return [r for _, (_, r) in sorted(self.papers.items())]


def rebuild_and_compare(trial_dir, expect, work, label, extra_env=None):
    """Build exactly the expected papers in a fresh folder that has the trial's caches,
    then compare the trial's graph.db with it."""
    work = Path(work)
    rb = work / f"rebuild-{label}"
    if rb.exists():
        shutil.rmtree(rb)
    rb.mkdir(parents=True)
    shutil.copytree(Path(trial_dir) / "cache", rb / "cache")
    final = work / f"final-{label}.jsonl"
    write_jsonl(final, expect.records())
    rc, out, err, dt = cli(rb, "build", str(final), extra_env=extra_env)
    log(f"rebuild {label}: rc={rc} in {dt:.0f}s; {err.strip().splitlines()[-1:]}")
    if rc != 0:
        log(out[-2000:], err[-2000:])
    diffs = compare.compare(str(Path(trial_dir) / "graph.db"), str(rb / "graph.db"))
    log(f"COMPARE {label}: " + ("SAME" if not diffs else "DIFFERENT\n" + "\n".join(diffs)))
    return diffs
