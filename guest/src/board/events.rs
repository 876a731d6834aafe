//! A board's serialized form, and the event log's record: one applied op with who applied it, when, and the revision it
//! made. The engine writes it and the engine reads it back, so a log written by one runtime
//! replays in every other; replaying a board's events in order onto its creation rebuilds it.

use super::{Board, BoardError, Op};
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The revision this op made: the board's revision before it, plus one.
    pub revision: u64,
    pub actor: String,
    pub at: String,
    pub op: Op,
}

/// Why an event did not replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayError {
    /// The text is not an event.
    Malformed(String),
    /// The event is not the board's next one; carries the revision expected.
    OutOfOrder(u64),
    /// The op was refused: the log and the board it is replayed onto disagree.
    Refused(BoardError),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Malformed(why) => write!(f, "not a board event: {why}"),
            ReplayError::OutOfOrder(expected) => write!(f, "the board's next event is revision {expected}"),
            ReplayError::Refused(e) => write!(f, "the event's op was refused: {e}"),
        }
    }
}

impl std::error::Error for ReplayError {}

impl Event {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an event serializes")
    }
}

impl Board {
    /// A board from its serialized form ([`Board::save`]).
    pub fn load(state: &str) -> Result<Board, String> {
        let board: Board = serde_json::from_str(state).map_err(|e| format!("not a serialized board: {e}"))?;
        if board.format != super::FORMAT {
            return Err(format!("not a serialized board: its format is {:?}, not {:?}", board.format, super::FORMAT));
        }
        Ok(board)
    }

    /// The serialized board: the snapshot the store keeps, the same bytes from every runtime.
    pub fn save(&self) -> String {
        serde_json::to_string(self).expect("a board serializes")
    }

    /// Applies an event from the log: the one with the next revision, exactly as recorded.
    pub fn replay(&mut self, text: &str) -> Result<(), ReplayError> {
        let event: Event = serde_json::from_str(text).map_err(|e| ReplayError::Malformed(e.to_string()))?;
        if event.revision != self.revision + 1 {
            return Err(ReplayError::OutOfOrder(self.revision + 1));
        }
        self.apply_within(&event.actor, &event.at, &event.op, true).map(drop).map_err(ReplayError::Refused)
    }
}
