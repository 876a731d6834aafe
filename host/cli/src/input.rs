//! What a command reads from a file or standard input: capped in size, and checked to be
//! UTF-8 where it must be text, each refusal naming where.

use anyhow::Result;
use std::io::Read;
use std::path::PathBuf;

/// Input that is not UTF-8: where its first bad byte is, as a diagnostic.
#[derive(Debug)]
pub struct NotUtf8 {
    pub name: String,
    pub diagnostic: workmem_runtime::Diagnostic,
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.name, self.diagnostic.line, self.diagnostic.column, self.diagnostic.message)
    }
}

impl std::error::Error for NotUtf8 {}

fn utf8(name: String, bytes: Vec<u8>) -> Result<(String, String)> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok((name, text)),
        Err(e) => {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            // The prefix of the line up to the bad byte is valid UTF-8, so it counts in characters.
            let column = String::from_utf8_lossy(&bytes[line_start..at]).chars().count() + 1;
            let message = if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
                "the input is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8".to_string()
            } else {
                format!("the input is not valid UTF-8 (byte 0x{:02x}); save it as UTF-8", bytes[at])
            };
            let diagnostic = workmem_runtime::Diagnostic {
                severity: workmem_runtime::Severity::Error,
                line: u32::try_from(line).unwrap_or(u32::MAX),
                column: u32::try_from(column).unwrap_or(u32::MAX),
                message,
            };
            Err(NotUtf8 { name, diagnostic }.into())
        }
    }
}

/// An input file that cannot be opened or read (missing, a folder, no permission).
#[derive(Debug)]
pub struct Unreadable {
    pub name: String,
    pub source: std::io::Error,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read {}: {}", self.name, self.source)
    }
}

impl std::error::Error for Unreadable {}

/// Input past the size cap.
#[derive(Debug)]
pub struct TooLarge {
    pub name: String,
    pub cap: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is larger than {} bytes, the most an input may be (${MAX_INPUT_ENV} raises it)", self.name, self.cap)
    }
}

impl std::error::Error for TooLarge {}

/// Overrides [`DEFAULT_MAX_INPUT_BYTES`].
const MAX_INPUT_ENV: &str = "WORKMEM_MAX_INPUT_BYTES";
/// 16 MiB: a thousand times a large update.
const DEFAULT_MAX_INPUT_BYTES: u64 = 16 << 20;

/// The input text and the name diagnostics should call it by. Input past the cap is
/// refused before it is all read.
pub fn read_input(file: Option<&PathBuf>) -> Result<(String, String)> {
    let (name, bytes) = read_bytes(file)?;
    utf8(name, bytes)
}

/// [`read_input`]'s bytes, before any check of their encoding.
pub fn read_bytes(file: Option<&PathBuf>) -> Result<(String, Vec<u8>)> {
    let cap = match std::env::var(MAX_INPUT_ENV) {
        Ok(v) => v.parse::<u64>().map_err(|_| anyhow::anyhow!("${MAX_INPUT_ENV} is {v:?}: it takes a number of bytes"))?,
        Err(_) => DEFAULT_MAX_INPUT_BYTES,
    };
    let unreadable = |name: &str| {
        let name = name.to_string();
        move |source| Unreadable { name, source }
    };
    let (name, source): (String, Box<dyn Read>) = match file {
        Some(p) if p.as_os_str() != "-" => {
            let name = p.display().to_string();
            let file = std::fs::File::open(p).map_err(unreadable(&name))?;
            (name, Box::new(file))
        }
        _ => ("<stdin>".to_string(), Box::new(std::io::stdin())),
    };
    let mut bytes = Vec::new();
    source.take(cap + 1).read_to_end(&mut bytes).map_err(unreadable(&name))?;
    if bytes.len() as u64 > cap {
        return Err(TooLarge { name, cap }.into());
    }
    Ok((name, bytes))
}
