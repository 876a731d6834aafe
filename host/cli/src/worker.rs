//! A worker on a shared board (spec 002), as `workmem agent` and `workmem mcp` take one.

use crate::db;
use anyhow::Result;
use workmem_runtime::Runtime;

/// A worker on a shared board (spec 002).
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// Work on a task of this board: its context and nudges ride on every request, the board tools are offered
    #[arg(long, value_name = "BOARD", requires = "board_task")]
    board: Option<String>,
    /// The board's task this agent works on, T-<n>
    #[arg(long, value_name = "TASK", requires = "board")]
    board_task: Option<String>,
    #[command(flatten)]
    pub db: db::DbArg,
    /// Who this agent is on the board (default: $WORKMEM_AGENT, else worker)
    #[arg(long, value_name = "AGENT")]
    pub agent_name: Option<String>,
}

impl WorkerArgs {
    pub fn worker(self, runtime: &Runtime) -> Result<Option<workmem_agent::board::Worker>> {
        let (Some(board), Some(task)) = (self.board, self.board_task) else { return Ok(None) };
        let db = self.db.target()?;
        let boards = workmem_store::board::Boards::open(&db, runtime.clone(), Default::default())?;
        let agent = self.agent_name.or_else(|| std::env::var("WORKMEM_AGENT").ok()).unwrap_or_else(|| "worker".into());
        Ok(Some(workmem_agent::board::Worker { boards, board, task, agent }))
    }
}
