//! Where the client's settings come from: the environment, else the config file, else the
//! defaults.

use serde::Deserialize;
use std::time::Duration;

/// The default model when neither `WORKMEM_MODEL` nor the caller names one.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

#[derive(Debug, Clone)]
pub struct Config {
    /// Up to and including `/v1`, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub stream: bool,
    /// Deadline for one attempt, from sending the request to the last byte.
    pub timeout: Duration,
    /// Further attempts after the first fails with something worth retrying.
    pub max_retries: u32,
    /// First backoff when the provider gives no retry hint; doubled on every retry.
    pub backoff: Duration,
    /// The largest answer taken (its text and tool-call arguments, in bytes); a longer one is
    /// [`LlmError::TooLarge`], and what arrives past it is not read.
    pub max_answer_bytes: usize,
}

/// Overrides [`Config::max_answer_bytes`].
pub const MAX_ANSWER_ENV: &str = "WORKMEM_MAX_ANSWER_BYTES";

/// Seconds one attempt may take, unless a caller says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// Further attempts after a failure worth retrying, unless a caller says otherwise.
pub const DEFAULT_RETRIES: u32 = 3;

/// 1 MiB: sixty times a long real answer, and far below what would hurt the host.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 1 << 20;

/// The optional config file: `{"base_url": ..., "api_key": ..., "model": ...}`, any of them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
}

impl Config {
    /// `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `WORKMEM_MODEL`, else the config file
    /// (`$WORKMEM_CONFIG`, else `~/.config/workmem/config.json`, if it exists), else the
    /// defaults (`https://api.openai.com/v1`, no key, [`DEFAULT_MODEL`]); streaming, 120 s per
    /// attempt, 3 retries, answers up to `$WORKMEM_MAX_ANSWER_BYTES` (default 1 MiB).
    pub fn load() -> Result<Self, ConfigError> {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let path = var("WORKMEM_CONFIG").map(std::path::PathBuf::from).or_else(|| {
            let base = var("XDG_CONFIG_HOME").map(std::path::PathBuf::from).or_else(|| var("HOME").map(|h| std::path::Path::new(&h).join(".config")))?;
            Some(base.join("workmem").join("config.json"))
        });
        let file = match path {
            Some(path) if path.exists() => {
                let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read { path: path.clone(), source })?;
                serde_json::from_str(&text).map_err(|source| ConfigError::Invalid { path, source })?
            }
            _ => File::default(),
        };
        let max_answer_bytes = match var(MAX_ANSWER_ENV) {
            Some(v) => v.parse().map_err(|_| ConfigError::Setting { name: MAX_ANSWER_ENV, value: v })?,
            None => DEFAULT_MAX_ANSWER_BYTES,
        };
        Ok(Config {
            max_answer_bytes,
            base_url: var("OPENAI_BASE_URL").or(file.base_url).unwrap_or_else(|| "https://api.openai.com/v1".into()),
            api_key: var("OPENAI_API_KEY").or(file.api_key),
            model: var("WORKMEM_MODEL").or(file.model).unwrap_or_else(|| DEFAULT_MODEL.into()),
            stream: true,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_retries: DEFAULT_RETRIES,
            backoff: Duration::from_millis(500),
        })
    }
}

/// The config file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading the LLM config file {}", path.display())]
    Read { path: std::path::PathBuf, source: std::io::Error },
    #[error("the LLM config file {} is not valid: it takes {{\"base_url\", \"api_key\", \"model\"}}", path.display())]
    Invalid { path: std::path::PathBuf, source: serde_json::Error },
    #[error("${name} is {value:?}: it takes a number of bytes")]
    Setting { name: &'static str, value: String },
}
