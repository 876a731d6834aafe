"""Three `workmem proxy` replicas on one PostgreSQL database behind HAProxy, round-robin with no
stickiness (`make test-proxy`'s fleet runs): what a team runs as one service. `Fleet` answers as
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
import time
from pathlib import Path
from typing import Any, Callable

REPLICAS = 3


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
    """`REPLICAS` proxies on one database behind HAProxy: `url` is the balancer's."""

    def __init__(self, workmem: str, proxy_args: list[str], sessions: Path, cwd: Path):
        self.workmem_bin, self.cwd = workmem, cwd
        sessions.mkdir(parents=True, exist_ok=True)
        self.sessions = sessions  # the run's folder: logs and the balancer's config
        self.db = Postgres()
        self.env = {**os.environ, "WORKMEM_SESSIONS_DB": self.db.url}
        self.env.pop("WORKMEM_SESSIONS_DIR", None)
        self.argv = [workmem, "proxy", "--listen", "127.0.0.1:0", *proxy_args, "--json"]
        self.replicas: list[subprocess.Popen[str] | None] = []
        self.ports: list[int] = []
        for i in range(REPLICAS):
            process, port = self.start_replica(i)
            self.replicas.append(process)
            self.ports.append(port)
        self.balancer_port = free_port()
        config = sessions / "haproxy.cfg"
        # Round-robin per request, no stickiness; a replica that refuses connections is tried
        # no more (checked every 200 ms) and its requests go to another, as a team's balancer
        # is set up.
        servers = "\n".join(f"  server r{i} 127.0.0.1:{p} check inter 200ms fall 1 rise 2" for i, p in enumerate(self.ports))
        config.write_text(f"""global
  maxconn 512
  log stdout format raw local0
defaults
  mode http
  log global
  option httplog
  timeout connect 2s
  timeout client 600s
  timeout server 600s
  retries 3
  option redispatch
frontend fleet
  bind 127.0.0.1:{self.balancer_port}
  default_backend replicas
backend replicas
  balance roundrobin
{servers}
""")
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        self.balancer_log = (sessions / "haproxy.log").open("w")
        self.balancer = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdout=self.balancer_log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not self.listening(self.balancer_port):
            if self.balancer.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"haproxy did not start: {(sessions / 'haproxy.log').read_text()}")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.balancer_port}"
        self.killed: list[int] = []
        self.restarts = 0

    def start_replica(self, i: int) -> tuple[subprocess.Popen[str], int]:
        log = (self.sessions / f"replica-{i}.log").open("a")
        process = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE, stderr=log, text=True)
        line = process.stdout.readline() if process.stdout else ""
        if not line:
            raise SystemExit(f"replica {i} did not start: {(self.sessions / f'replica-{i}.log').read_text()}")
        return process, int(json.loads(line)["listening"].rsplit(":", 1)[1])

    @staticmethod
    def listening(port: int) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    def answering(self, upstream_port: int) -> int | None:
        """The replica with a connection open to the upstream: the one answering a request now."""
        inodes = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[2].rsplit(":", 1)[1], 16) == upstream_port and fields[3] == "01":
                    inodes.add(fields[9])
        for i, process in enumerate(self.replicas):
            if process is None:
                continue
            for fd in Path(f"/proc/{process.pid}/fd").iterdir():
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
        process = self.replicas[i]
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait()
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
        """Stops the replicas, the balancer and the database; what the replicas logged."""
        for process in self.replicas:
            if process and process.poll() is None:
                process.terminate()
        for process in self.replicas:
            if process:
                try:
                    process.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.communicate()
        self.balancer.terminate()
        self.balancer.wait(timeout=10)
        self.balancer_log.close()
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
