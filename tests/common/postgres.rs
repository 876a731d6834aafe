//! A real PostgreSQL server for tests: Debian's binaries, a fresh cluster in a temporary
//! directory, listening on a free loopback port, stopped when dropped. A missing PostgreSQL
//! fails the test unless `WORKMEM_SKIP_POSTGRES` is set, where the test says it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Server {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    pub url: String,
}

/// Where Debian puts the server binaries (`/usr/lib/postgresql/<major>/bin`), or PATH.
fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql").into_iter().flatten().flatten().map(|e| e.path().join("bin")).collect();
    dirs.sort();
    dirs.into_iter().rev().find(|d| d.join("initdb").exists()).or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find(|d| d.join("initdb").exists())
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// PostgreSQL refuses to run as root; as root the server runs as the `postgres` user.
fn as_server_user(program: &Path) -> Command {
    if rustix::process::geteuid().is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run(mut c: Command, what: &str) {
    let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what} failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

impl Server {
    /// Starts a server, or `None` (with a note on stderr) where PostgreSQL is not installed
    /// and `WORKMEM_SKIP_POSTGRES` is set; not installed and not set, it fails.
    pub fn start() -> Option<Server> {
        let Some(bin) = bin_dir() else {
            // Skipped only when asked: a suite that passed because its server was missing
            // proved nothing, and libtest hides the line that said so.
            assert!(
                std::env::var_os("WORKMEM_SKIP_POSTGRES").is_some(),
                "PostgreSQL is not installed: apt-get install postgresql (.ci/run does), or set WORKMEM_SKIP_POSTGRES=1 to skip the PostgreSQL suites"
            );
            eprintln!("SKIPPED: the PostgreSQL suites ($WORKMEM_SKIP_POSTGRES)");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("workmem-pg-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        if rustix::process::geteuid().is_root() {
            run(
                {
                    let mut c = Command::new("chown");
                    c.arg("postgres:").arg(&dir);
                    c
                },
                "chown",
            );
        }
        let data = dir.join("data");
        let mut initdb = as_server_user(&bin.join("initdb"));
        initdb.arg("-D").arg(&data).args(["-U", "workmem", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
        run(initdb, "initdb");
        let port = free_port();
        let server = Server { dir, bin, port, url: format!("postgres://workmem@127.0.0.1:{port}/postgres") };
        server.pg_ctl_start();
        Some(server)
    }

    fn pg_ctl_start(&self) {
        run(self.pg_ctl("start", &[]), "pg_ctl start");
    }

    /// `pg_ctl <action>` on this server as it is started (its port, socket folder and log),
    /// waiting for the server, with `flags` first.
    fn pg_ctl(&self, action: &str, flags: &[&str]) -> Command {
        let mut pg_ctl = as_server_user(&self.bin.join("pg_ctl"));
        pg_ctl
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(flags)
            .args(["-w", "-t", "60", "-o"])
            .arg(format!("-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=64", self.port, self.dir.display()))
            .arg(action);
        pg_ctl
    }

    fn pg_ctl_stop_immediately(&self) -> std::io::Result<std::process::Output> {
        let mut stop = as_server_user(&self.bin.join("pg_ctl"));
        stop.arg("-D").arg(self.dir.join("data")).args(["-m", "immediate", "-w", "stop"]);
        stop.output()
    }

    /// Kills the server as a crash would (`pg_ctl stop -m immediate`: no checkpoint, no
    /// flush, every backend gone at once) and starts it again, which replays the WAL.
    #[allow(dead_code)] // the benchmarks include this file and crash nothing
    pub fn crash_and_restart(&self) {
        let out = self.pg_ctl_stop_immediately().expect("pg_ctl stop");
        assert!(out.status.success(), "pg_ctl stop -m immediate failed: {}", String::from_utf8_lossy(&out.stderr));
        self.pg_ctl_start();
    }

    /// Restarts the server as an operator does (`pg_ctl restart -m fast`: every backend
    /// terminated, the clients' connections with them).
    #[allow(dead_code)] // the benchmarks include this file and restart nothing
    pub fn restart(&self) {
        run(self.pg_ctl("restart", &["-m", "fast"]), "pg_ctl restart");
    }

    /// A new, empty database on this server, as a URL.
    pub fn database(&self, name: &str) -> String {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).expect("connect to the test server");
        client.batch_execute(&format!("CREATE DATABASE {name}")).expect("create a test database");
        self.url.replace("/postgres", &format!("/{name}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.pg_ctl_stop_immediately();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
