//! How a runtime is set up: the limits of every call, and where it keeps what it compiles.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where [`Runtime::from_bytes`](crate::Runtime) keeps what it compiled (feature
    /// `compiler`); `None` compiles on every load. The components this crate carries come
    /// compiled and never use it.
    pub cache_dir: Option<PathBuf>,
    /// The most linear memory one instance may use. Past it, the guest's allocation fails,
    /// which is a trap, reported as [`Error::MemoryLimit`].
    pub max_memory_bytes: usize,
    /// The most CPU time one call may spend inside the guest (time spent in the host's
    /// imports, such as waiting for the model, does not count). Past it the call ends with
    /// [`Error::Deadline`].
    pub call_deadline: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options { cache_dir: default_cache_dir(), max_memory_bytes: 256 << 20, call_deadline: Duration::from_secs(10) }
    }
}

/// Overrides [`Options::max_memory_bytes`] in [`Options::from_env`].
pub const MAX_MEMORY_ENV: &str = "WORKMEM_MAX_MEMORY_BYTES";
/// Overrides [`Options::call_deadline`] in [`Options::from_env`], in seconds.
pub const DEADLINE_ENV: &str = "WORKMEM_CALL_DEADLINE_SECS";

impl Options {
    /// The defaults, with `$WORKMEM_MAX_MEMORY_BYTES` and `$WORKMEM_CALL_DEADLINE_SECS`
    /// where they are set. Errors: a value that is not a number, naming the variable.
    pub fn from_env() -> std::result::Result<Self, String> {
        let mut options = Options::default();
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        if let Some(v) = var(MAX_MEMORY_ENV) {
            options.max_memory_bytes = v.parse().map_err(|_| format!("${MAX_MEMORY_ENV} is {v:?}: it takes a number of bytes"))?;
        }
        if let Some(v) = var(DEADLINE_ENV) {
            options.call_deadline = v
                .parse::<f64>()
                .ok()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or_else(|| format!("${DEADLINE_ENV} is {v:?}: it takes a number of seconds"))?;
        }
        Ok(options)
    }
}

/// `$WORKMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/workmem`, else `~/.cache/workmem`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WORKMEM_CACHE_DIR") {
        return Some(dir.into());
    }
    let base = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("workmem"))
}
