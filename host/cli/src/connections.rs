//! The flags that bound what one connection can make `workmem serve` or `workmem proxy` wait
//! for (workmem-listener's `Limits`).

use clap::Args;
use std::time::Duration;
use workmem_listener::Limits;

#[derive(Args)]
pub struct ConnectionArgs {
    /// Close a connection that sends no whole request head for this long (an idle keep-alive
    /// connection included)
    #[arg(long, default_value_t = Limits::default().header_timeout.into(), value_parser = duration)]
    header_timeout: humantime::Duration,
    /// Refuse a request (408) whose body has not all arrived this long after its head
    #[arg(long, default_value_t = Limits::default().body_timeout.into(), value_parser = duration)]
    body_timeout: humantime::Duration,
    /// Connections open at once (at most half the open-file limit); at the cap a new one makes
    /// the connections with no request in flight close
    #[arg(long, default_value_t = Limits::default().max_connections as u32, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    max_connections: u32,
    /// After Ctrl-C or SIGTERM, how long the requests in flight (streams included) get to finish
    #[arg(long, default_value_t = Limits::default().shutdown_timeout.into(), value_parser = duration)]
    shutdown_timeout: humantime::Duration,
}

impl ConnectionArgs {
    pub fn limits(&self) -> Limits {
        Limits {
            header_timeout: self.header_timeout.into(),
            body_timeout: self.body_timeout.into(),
            max_connections: self.max_connections as usize,
            shutdown_timeout: self.shutdown_timeout.into(),
        }
    }
}

/// A duration from 1 ms to a day: zero would close every connection at once, and a deadline
/// centuries away overflows the clock it is added to.
fn duration(text: &str) -> Result<humantime::Duration, String> {
    let d: humantime::Duration = text.parse().map_err(|e: humantime::DurationError| e.to_string())?;
    if *d < Duration::from_millis(1) || *d > Duration::from_secs(86_400) {
        return Err(format!("{text} is outside 1ms..=1day"));
    }
    Ok(d)
}
