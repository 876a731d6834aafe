//! Which model a command asks, and how: where and with which key come from the environment
//! or the config file (`workmem_llm::Config`).

use anyhow::{Context, Result};

/// How the LLM is called.
#[derive(clap::Args)]
pub struct LlmArgs {
    /// Seconds one LLM call may take
    #[arg(long, value_name = "SECONDS", default_value_t = workmem_llm::DEFAULT_TIMEOUT_SECS as f64)]
    timeout: f64,
    /// Further attempts at an LLM call after a 429, 5xx, timeout or broken stream
    #[arg(long, default_value_t = workmem_llm::DEFAULT_RETRIES)]
    retries: u32,
    /// Ask for whole answers instead of streams
    #[arg(long)]
    no_stream: bool,
}

impl LlmArgs {
    pub fn client(&self, model: &str) -> Result<workmem_llm::Client> {
        let mut config = workmem_llm::Config::load()?;
        config.model = model.to_string();
        config.stream = !self.no_stream;
        config.timeout = std::time::Duration::try_from_secs_f64(self.timeout).context("--timeout takes a number of seconds")?;
        config.max_retries = self.retries;
        Ok(workmem_llm::Client::new(config))
    }
}

/// The model named, else the configured one.
pub fn model(name: Option<String>) -> Result<String> {
    Ok(match name {
        Some(m) => m,
        None => workmem_llm::Config::load()?.model,
    })
}
