//! `workmem mcp`: the agent loop's tools over MCP (stdio), for a client whose model keeps its
//! working memory in a workmem session. The tools are the registry's
//! (`workmem_agent::tools`): the memory files, `update_memory`, `compact_history`,
//! `read_history`, the context documents' `context_get` and `context_put`, and, for a worker
//! on a board, the `board_*` tools, each with its JSON schema. A refusal is a tool result
//! with `isError` and the sentence the model can correct itself from; only a failure of the
//! host itself is a protocol error.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use std::sync::{Arc, Mutex};
use workmem_agent::board::Worker;
use workmem_agent::tools::{self, DocumentAccess, ToolContext};
use workmem_llm::{Client, Tokenizer};
use workmem_runtime::Runtime;
use workmem_store::Session;

/// What the tools work on: one session, and optionally a model (for `compact_history`'s
/// summaries), a board task and context documents.
pub struct Workspace {
    pub session: Session,
    pub runtime: Runtime,
    pub tokenizer: Tokenizer,
    pub llm: Option<Client>,
    pub worker: Option<Worker>,
    pub documents: Option<DocumentAccess>,
}

/// The MCP server over a [`Workspace`]; tool calls run one at a time, on a blocking thread.
#[derive(Clone)]
pub struct Server {
    workspace: Arc<Mutex<Workspace>>,
    tools: Arc<Vec<Tool>>,
}

impl Server {
    pub fn new(workspace: Workspace) -> Self {
        let tools = tools::offered(workspace.worker.is_some(), workspace.documents.is_some())
            .map(|t| {
                let schema = match t.parameters() {
                    serde_json::Value::Object(map) => map,
                    _ => unreachable!("a tool's parameters are a JSON object"),
                };
                Tool::new(t.name, t.description, Arc::new(schema))
            })
            .collect();
        Server { workspace: Arc::new(Mutex::new(workspace)), tools: Arc::new(tools) }
    }

    /// Serves on standard input and output until the client closes them.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.serve(rmcp::transport::stdio()).await?.waiting().await?;
        Ok(())
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        config.server_info = Implementation::new("workmem", env!("CARGO_PKG_VERSION"));
        config.instructions = Some(
            "workmem keeps this conversation's working memory in a session: read and write its files (working-memory/overview.md is the summary), record learnings with update_memory, and free context with compact_history.".into(),
        );
        config
    }

    async fn list_tools(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, _: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let name = request.name.into_owned();
        let workspace = self.workspace.clone();
        let tool = name.clone();
        let output = tokio::task::spawn_blocking(move || {
            let mut w = workspace.lock().unwrap_or_else(|p| p.into_inner());
            let Workspace { session, runtime, tokenizer, llm, worker, documents } = &mut *w;
            let mut cx = ToolContext { session, runtime, tokenizer, llm: llm.as_ref(), board: worker.as_mut(), documents: documents.as_mut() };
            tools::call(&mut cx, &name, &arguments)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool's worker failed: {e}"), None))?
        .map_err(|e| {
            // The host's failure (a path, the engine's trap and its wasm backtrace) goes to
            // the operator's log; the client and its model get a sentence.
            // Escaped: the tool's name and what failed may be the model's text, and this is a log.
            eprintln!("workmem mcp: {} failed: {}", tool.escape_debug(), workmem_runtime::error_chain(&e).escape_debug());
            ErrorData::internal_error(format!("the tool {tool} failed in the host; its log (standard error) has the detail"), None)
        })?;
        let content = vec![ContentBlock::text(output.text)];
        Ok(if output.ok { CallToolResult::success(content) } else { CallToolResult::error(content) }.into())
    }
}
