//! A worker on a shared board (spec 002): the agent loop carries its task's context and the
//! nudges for it on every request, renews its claim while it works, and offers the board
//! operations a worker needs as tools (the `board_*` tools).

use crate::error::Result;
use workmem_runtime::board::Op;
use workmem_store::board::{Boards, Error};

/// The board and task an agent works on, and who it is there.
pub struct Worker {
    pub boards: Boards,
    pub board: String,
    pub task: String,
    pub agent: String,
}

impl Worker {
    /// The block each request carries after the history, next to context_meta: it changes
    /// whenever the board does, so it stays out of the cached prefix.
    pub fn brief(&mut self) -> Result<String> {
        let text = self.boards.brief(&self.board, &self.task)?;
        Ok(format!("<task_board board=\"{}\" agent=\"{}\">\n{}</task_board>", self.board, self.agent, text))
    }

    /// Renews the agent's claim on its task; a task it does not hold (not yet started, or
    /// done) has no claim to renew, which is not an error.
    pub fn heartbeat(&mut self) -> Result<()> {
        match self.boards.apply(&self.board, None, &self.agent, &Op::Heartbeat(self.task.clone())) {
            Ok(_) | Err(Error::Refused { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}
