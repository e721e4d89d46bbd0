"""Start, kill and stop a real local Neo4j 5.26 for tests, through ``scripts/neo4j.sh``.

The script fetches the jars once (Maven, cached under ~/.cache/citegraph) and runs the
embedded DBMS with its Bolt connector on 127.0.0.1. Each server here has its own state
folder (pid file, log) and data folder, and watches the test process: if pytest dies
without stopping it, the server stops by itself within a second or two.

    server = Neo4jServer.start(tmp_path / "neo4j")
    driver = neo4j.GraphDatabase.driver(server.uri, auth=server.auth)
    ...
    server.stop()
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "neo4j.sh"
USER = "neo4j"
DATABASE = "neo4j"
#: C1 only: starts in ~12 s instead of ~20 s on two cores; the tests' queries are tiny
#: (benchmarks run the script's default, the full JIT)
TEST_JAVA_OPTS = "-XX:TieredStopAtLevel=1"


class Neo4jStartError(RuntimeError):
    """The server could not be started; the message says why (with the log tail)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _script(
    *args: str, timeout: float = 300.0, java_opts: str = TEST_JAVA_OPTS
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CITEGRAPH_NEO4J_JAVA_OPTS=java_opts)
    env.pop("NEO4J_PASSWORD", None)  # the password is always given explicitly
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _parse_env(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export ") :].split("=", 1)
            out[key] = shlex.split(value)[0] if value else ""
    return out


@dataclass
class Neo4jServer:
    """A server started by scripts/neo4j.sh; ``stop()`` ends it by its pid."""

    state: Path
    data: Path
    port: int
    password: str
    heap: str = "512m"
    conf: tuple[str, ...] = ()
    java_opts: str = TEST_JAVA_OPTS
    user: str = USER
    database: str = DATABASE
    #: a folder of its own, removed by stop()
    owned_root: Path | None = field(default=None, repr=False)

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    @property
    def pid_file(self) -> Path:
        return self.state / "neo4j.pid"

    @property
    def log_path(self) -> Path:
        return self.state / "neo4j.log"

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    @property
    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    @property
    def version(self) -> str:
        """The Neo4j version the launcher reported (from its log)."""
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("NEO4J_VERSION "):
                return line.split(" ", 1)[1]
        return "unknown"

    @classmethod
    def start(
        cls,
        root: Path | None = None,
        *,
        port: int | None = None,
        password: str | None = None,
        heap: str = "512m",
        conf: tuple[str, ...] = (),
        java_opts: str = TEST_JAVA_OPTS,
    ) -> Neo4jServer:
        """Start a server with its state and data under ``root``; wait until Bolt answers.

        Without ``root``, a temporary folder of its own, removed by :meth:`stop`. (Not
        pytest's tmp_path: pytest keeps only its last three base folders, so another
        pytest run on the machine can delete them under a running server.)
        """
        owned = None
        if root is None:
            root = owned = Path(tempfile.mkdtemp(prefix="citegraph-neo4j-test-"))
        server = cls(
            state=root / "state",
            data=root / "data",
            port=port or 0,
            password=password or "pw-" + secrets.token_hex(8),
            heap=heap,
            conf=conf,
            java_opts=java_opts,
            owned_root=owned,
        )
        server._run_start()
        return server

    def _run_start(self) -> None:
        args = [
            "start", "--state", str(self.state), "--data", str(self.data),
            "--password", self.password, "--heap", self.heap,
            "--port", str(self.port), "--watch-pid", str(os.getpid()),
        ]
        for line in self.conf:
            args += ["--conf", line]
        try:
            out = _script(*args, java_opts=self.java_opts)
        except subprocess.TimeoutExpired as exc:
            self.stop()
            raise Neo4jStartError(f"scripts/neo4j.sh start timed out:\n{self.log_tail()}") from exc
        if out.returncode != 0:
            self.stop()
            raise Neo4jStartError(
                f"scripts/neo4j.sh start failed ({out.returncode}):\n{out.stderr[-3000:]}"
            )
        env = _parse_env(out.stdout)
        if env.get("NEO4J_PASSWORD") != self.password or "NEO4J_URI" not in env:
            self.stop()
            raise Neo4jStartError(f"unexpected output of scripts/neo4j.sh start:\n{out.stdout}")
        self.port = int(env["NEO4J_URI"].rsplit(":", 1)[1])

    def kill(self) -> None:
        """SIGKILL the JVM by its pid: no shutdown hook, no flush."""
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            # a zombie until the script's nohup parent is gone; the state is what counts
            if "State:\tZ" in _proc_status(pid):
                break
            time.sleep(0.05)

    def restart(self) -> None:
        """Start again on the same port, password and data folder (the data survives)."""
        self._run_start()

    def stop(self) -> None:
        """Stop the server by its pid (TERM, then KILL after 60 s); safe twice."""
        _script("stop", "--state", str(self.state), timeout=120.0)
        if self.owned_root is not None:
            shutil.rmtree(self.owned_root, ignore_errors=True)

    def __enter__(self) -> Neo4jServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _proc_status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""
