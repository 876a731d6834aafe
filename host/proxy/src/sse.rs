//! Server-sent events as a stream delivers them line by line: whole events, once the blank
//! line that ends each arrives, with their `data` parsed.

use crate::protocol::Unreadable;
use bytes::Bytes;
use serde_json::Value;

/// An event's lines so far.
#[derive(Default)]
pub(crate) struct Events {
    pending: Vec<u8>,
}

pub(crate) enum Event {
    /// An event with JSON data.
    Data(Value),
    /// Anything else (a comment, an event without data): passed on as it came.
    Other(Bytes),
}

impl Events {
    /// One line; the event it ends, if it ends one.
    pub fn line(&mut self, line: &[u8]) -> Result<Option<Event>, Unreadable> {
        self.pending.extend_from_slice(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let event = std::mem::take(&mut self.pending);
        let text = std::str::from_utf8(&event).map_err(|_| Unreadable::NotUtf8("a stream event"))?;
        match text.lines().find_map(|l| l.strip_prefix("data:")).map(str::trim) {
            Some(data) => Ok(Some(Event::Data(serde_json::from_str(data).map_err(Unreadable::json("a stream event"))?))),
            None => Ok(Some(Event::Other(Bytes::from(event)))),
        }
    }
}
