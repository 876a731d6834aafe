//! `workmem proxy`: an unmodified agent's API base URL pointed at workmem (workmem-proxy),
//! until Ctrl-C or SIGTERM.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;
use workmem_runtime::Runtime;
use workmem_store::Sessions;

#[derive(Args)]
pub struct ProxyArgs {
    /// The address to listen on (port 0: any free port, printed at start)
    #[arg(long, default_value = "127.0.0.1:7384", value_name = "HOST:PORT")]
    listen: String,
    /// The provider's base URL, e.g. https://api.openai.com or https://api.anthropic.com
    #[arg(long, value_name = "URL")]
    upstream: String,
    #[command(flatten)]
    connections: crate::connections::ConnectionArgs,
    /// The model's context window in tokens: the fallback compacts at three quarters of it
    #[arg(long, default_value_t = 128_000, value_parser = clap::value_parser!(u32).range(1024..))]
    window: u32,
    /// Compact by the compression guide (tools from 20% of the window, conversation from 40%,
    /// all from 60%) instead of leaving it to the model: spec 003's automatic mode
    #[arg(long)]
    auto_compact: bool,
    /// What happens when workmem fails on a request: send it upstream as the client sent it,
    /// or answer with the protocol's error
    #[arg(long, value_enum, default_value_t = OnError::Passthrough)]
    on_error: OnError,
    /// The largest request body read from a client, in bytes
    #[arg(long, default_value_t = 64 << 20)]
    max_body_bytes: usize,
    /// The largest upstream answer, whole or streamed, in bytes
    #[arg(long, default_value_t = 16 << 20)]
    max_answer_bytes: usize,
    /// Upstream requests one client request may take while the model calls only workmem's tools
    #[arg(long, default_value_t = 8)]
    max_rounds: u32,
    /// Deadline for one upstream request, to its last byte
    #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
    upstream_timeout: Duration,
    /// Client requests handled at once (a stream holds its slot to its last byte)
    #[arg(long, default_value_t = 64)]
    slots: usize,
    /// How long a request waits for a slot before it is refused with 503
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    slot_wait: Duration,
    /// How long a request waits for another request of its conversation to end (on any replica
    /// of a database's sessions) before it is refused with 409 and retry-after
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    busy_wait: Duration,
    /// What the sessions keep in memory between requests, in all, in bytes (past it the least
    /// recently used let go of theirs, and their next request costs more)
    #[arg(long, default_value_t = workmem_proxy::MAX_WARM_BYTES)]
    max_warm_bytes: usize,
    /// Sessions kept in memory, read from disk at their caller's first request or made since
    /// (of those on disk, the last this many made are found; past it the least recently
    /// used is let go of; its files stay, and its client's next request starts a new session)
    #[arg(long, default_value_t = workmem_proxy::MAX_SESSIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_sessions: usize,
}

#[derive(Clone, Copy, ValueEnum)]
enum OnError {
    Passthrough,
    Fail,
}

pub fn run(runtime: Runtime, sessions: Sessions, args: ProxyArgs, as_json: bool) -> Result<ExitCode> {
    let config = workmem_proxy::Config {
        upstream: args.upstream.clone(),
        sessions,
        window: args.window,
        auto_compact: args.auto_compact,
        on_error: match args.on_error {
            OnError::Passthrough => workmem_proxy::OnError::Passthrough,
            OnError::Fail => workmem_proxy::OnError::Fail,
        },
        max_body_bytes: args.max_body_bytes,
        max_answer_bytes: args.max_answer_bytes,
        max_rounds: args.max_rounds.max(1),
        timeout: args.upstream_timeout,
        slots: args.slots,
        slot_wait: args.slot_wait,
        busy_wait: args.busy_wait,
        max_warm_bytes: args.max_warm_bytes,
        max_sessions: args.max_sessions,
    };
    // A proxy locks the same sessions again and again: each lock's holder file is linked from a
    // spare made once per session, not made anew (docs/cli.md, "Sessions on disk").
    workmem_store::claim_from_spares();
    let router = workmem_proxy::router(runtime, config)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the proxy's runtime")?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen).await.with_context(|| format!("listening on {}", args.listen))?;
        let url = format!("http://{}", listener.local_addr()?);
        // The first line says where it listens, for a script that started it on port 0.
        let upstream = workmem_proxy::shown_url(&args.upstream);
        if as_json {
            println!("{}", serde_json::json!({"listening": url, "upstream": upstream, "unmanaged": workmem_proxy::UNMANAGED}));
        } else {
            println!("listening on {url}, proxying to {upstream}");
            eprintln!("workmem proxy: passed through as sent, unmanaged: {}", workmem_proxy::UNMANAGED.join("; "));
        }
        std::io::stdout().flush()?;
        workmem_listener::serve(listener, router, args.connections.limits()).await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
