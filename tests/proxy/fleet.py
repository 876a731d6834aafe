"""Three `workmem proxy` replicas on one PostgreSQL database behind HAProxy, round-robin with no
stickiness (`make test-proxy`'s fleet runs), started by examples/fleet/fleet.sh as docs/fleet.md
says: what a team runs as one service. `Fleet` answers as
run.py's `Proxy` does (its URL, its sessions and their logs, the CLI on them), so each real
client is checked by the same rules through the fleet as through one proxy, and it can kill the
replica that is answering (kill -9, mid-stream) and restart the database under the run.

A real PostgreSQL (Debian's binaries, a fresh cluster in a temporary directory on a free port, as
the Rust tests start theirs) and Debian's HAProxy; both are what `.ci/run` installs."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable

REPLICAS = 3
SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "fleet" / "fleet.sh"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_server_user(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root it runs as the `postgres` user."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


class Postgres:
    """A fresh cluster on a free loopback port, its database `fleet`; `stop` removes it."""

    def __init__(self) -> None:
        bins = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        initdb = str(bins[-1]) if bins else shutil.which("initdb")
        if not initdb:
            raise SystemExit("PostgreSQL is not installed: apt-get install postgresql (.ci/run does)")
        self.bin = Path(initdb).parent
        self.dir = Path(tempfile.mkdtemp(prefix="workmem-fleet-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
        self.port = free_port()
        self.run(["initdb", "-D", str(self.dir / "data"), "-U", "workmem", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
        self.pg_ctl("start")
        self.url = f"postgres://workmem@127.0.0.1:{self.port}/postgres"
        self.psql_bin = str(self.bin / "psql") if (self.bin / "psql").exists() else "psql"

    def run(self, argv: list[str]) -> None:
        argv[0] = str(self.bin / argv[0])
        out = subprocess.run(as_server_user(argv), capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {out.stdout}{out.stderr}")

    def pg_ctl(self, action: str, *flags: str) -> None:
        self.run(["pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), *flags, "-w", "-t", "60",
                  "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200", action])

    def restart(self) -> None:
        """As an operator restarts it: every backend terminated, the clients' connections too."""
        self.pg_ctl("restart", "-m", "fast")

    def query(self, sql: str) -> list[str]:
        out = subprocess.run([self.psql_bin, self.url, "-Atq", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise AssertionError(f"psql {sql!r}: {out.stderr}")
        return out.stdout.splitlines()

    def stop(self) -> None:
        try:
            self.run(["pg_ctl", "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


class Fleet:
    """`REPLICAS` proxies on one database behind HAProxy, started as docs/fleet.md starts them
    (examples/fleet/fleet.sh): `url` is the balancer's."""

    def __init__(self, workmem: str, upstream_url: str, proxy_args: list[str], sessions: Path, cwd: Path):
        self.workmem_bin, self.cwd = workmem, cwd
        sessions.mkdir(parents=True, exist_ok=True)
        self.sessions = sessions  # the fleet's folder: logs, PIDs, the balancer's config
        self.db = Postgres()
        self.env = {**os.environ, "WORKMEM_SESSIONS_DB": self.db.url}
        self.env.pop("WORKMEM_SESSIONS_DIR", None)
        port = free_port()
        env = {**self.env, "WORKMEM": workmem, "FLEET_DIR": str(sessions), "LISTEN": f"127.0.0.1:{port}", "REPLICAS": str(REPLICAS)}
        self.log = sessions / "fleet.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen([str(SCRIPT), upstream_url, self.db.url, *proxy_args], cwd=cwd, env=env,
                                            stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line.startswith("a fleet of"):
            self.process.kill()
            raise SystemExit(f"the fleet did not start: {line}{self.log.read_text()}")
        self.url = f"http://127.0.0.1:{port}"
        self.replicas: list[int | None] = [int((sessions / f"replica-{i}.pid").read_text()) for i in range(REPLICAS)]
        self.killed: list[int] = []
        self.restarts = 0

    def answering(self, upstream_port: int) -> int | None:
        """The replica with a connection open to the upstream: the one answering a request now."""
        inodes = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[2].rsplit(":", 1)[1], 16) == upstream_port and fields[3] == "01":
                    inodes.add(fields[9])
        for i, pid in enumerate(self.replicas):
            if pid is None:
                continue
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    if os.readlink(fd).removeprefix("socket:[").removesuffix("]") in inodes:
                        return i
                except OSError:
                    continue
        return None

    def kill_answering(self, upstream_port: int) -> None:
        """kill -9 of the replica answering now, mid-stream: the balancer finds it gone and the
        client's retry lands on another."""
        i = self.answering(upstream_port)
        if i is None:
            raise AssertionError("no replica had a request open upstream to kill")
        pid = self.replicas[i]
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        self.replicas[i] = None
        self.killed.append(i)

    def restart_database(self) -> None:
        self.db.restart()
        self.restarts += 1

    def served(self) -> dict[str, int]:
        """Requests the balancer sent each replica, from its log (one line a request)."""
        counts: dict[str, int] = {}
        for line in (self.sessions / "haproxy.log").read_text().splitlines():
            for word in line.split():
                if word.startswith("replicas/r"):
                    counts[word.split("/")[1]] = counts.get(word.split("/")[1], 0) + 1
        return counts

    def stop(self) -> str:
        """Stops the replicas and the balancer (the script does on SIGTERM), the database
        left running for the checks; what the replicas logged."""
        self.process.terminate()
        try:
            self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
        return self.logs()

    def logs(self) -> str:
        """What the replicas logged."""
        return "".join((self.sessions / f"replica-{i}.log").read_text() for i in range(REPLICAS))

    def close(self) -> None:
        self.db.stop()

    def workmem(self, *args: str) -> Any:
        out = subprocess.run([self.workmem_bin, *args, "--json"], cwd=self.cwd, env=self.env, capture_output=True, text=True)
        if out.returncode != 0:
            raise AssertionError(f"workmem {' '.join(args)} failed: {out.stdout}{out.stderr}")
        return json.loads(out.stdout)

    def metas(self) -> list[dict[str, Any]]:
        return [s["meta"] for s in self.workmem("session", "list")]

    def branches(self) -> list[str]:
        return [m["id"] for m in self.metas() if (m.get("proxied") or {}).get("branch_of")]

    def session_logs(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """Each proxied session's ID and its logged records, in order: the rows the database
        holds where a directory holds messages.jsonl."""
        out = []
        for meta in self.metas():
            if meta.get("proxied"):
                rows = self.db.query("SELECT r.record FROM workmem_session_record r JOIN workmem_session s USING (sid) "
                                     f"WHERE s.id = '{meta['id']}' ORDER BY r.seq")
                out.append((meta["id"], [json.loads(row) for row in rows]))
        return out


def fault_at(step: int, fault: Callable[[], None]) -> Callable[[int], None]:
    """A hook for the scripted model: `fault` once, when step `step` is being answered."""
    done = []

    def hook(at: int) -> None:
        if at == step and not done:
            done.append(at)
            fault()
    return hook
