//! `workmem serve`: the HTTP API (workmem-server) on the embedded default database or a
//! shared PostgreSQL, until Ctrl-C or SIGTERM.

use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::process::ExitCode;
use workmem_runtime::Runtime;
use workmem_store::documents;

#[derive(Args)]
pub struct ServeArgs {
    /// The address to listen on (port 0: any free port, printed at start)
    #[arg(long, default_value = "127.0.0.1:7383", value_name = "HOST:PORT")]
    listen: String,
    #[command(flatten)]
    db: crate::db::DbArg,
    #[command(flatten)]
    connections: crate::connections::ConnectionArgs,
    /// Requests served at once (each holds database connections and an engine instance)
    #[arg(long, default_value_t = 8)]
    slots: usize,
    /// The largest request body read, in bytes
    #[arg(long, default_value_t = 1024 * 1024)]
    max_body_bytes: usize,
    /// The largest context document stored, in bytes
    #[arg(long, default_value_t = documents::Config::default().max_bytes)]
    max_document_bytes: u64,
    /// Versions kept per memory; older ones are deleted
    #[arg(long, default_value_t = documents::Config::default().keep_versions)]
    keep_versions: u64,
}

pub fn run(runtime: Runtime, sessions: workmem_store::Sessions, args: ServeArgs, as_json: bool) -> Result<ExitCode> {
    let db = args.db.target()?;
    let config = workmem_server::Config {
        db: db.clone(),
        sessions,
        slots: args.slots,
        max_body_bytes: args.max_body_bytes,
        documents: documents::Config { max_bytes: args.max_document_bytes, keep_versions: args.keep_versions },
    };
    let router = workmem_server::router(runtime, &config).map_err(|e| anyhow::anyhow!("{} ({})", e.message, e.code))?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the server's runtime")?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen).await.with_context(|| format!("listening on {}", args.listen))?;
        let url = format!("http://{}", listener.local_addr()?);
        // The first line says where it listens, for a script that started it on port 0.
        if as_json {
            println!(
                "{}",
                serde_json::json!({"listening": url, "db": workmem_store::db::redact(&db), "openapi": format!("{url}{}", workmem_server::OPENAPI_PATH)})
            );
        } else {
            println!("listening on {url} (database {}; API described at {url}{})", workmem_store::db::redact(&db), workmem_server::OPENAPI_PATH);
        }
        std::io::stdout().flush()?;
        workmem_listener::serve(listener, router, args.connections.limits()).await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
