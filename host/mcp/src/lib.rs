//! `workmem mcp`: the agent loop's tools over MCP (stdio), for a client whose model keeps its
//! working memory in a workmem session. The tools are the registry's
//! (`workmem_agent::tools`): the memory files, `update_memory` (its description carrying the
//! engine's own DSL instructions and example, since a host's model gets no workmem system
//! prompt), `compact_history` and `read_history` when the session has a message history to
//! work on, the context documents' `context_get` and `context_put`, and, for a worker on a
//! board, the `board_*` tools, each with its JSON schema. The memory is also a resource
//! (`overview.md`) and the memory-update prompt a prompt. A refusal is a tool result with
//! `isError` and the sentence the model can correct itself from; only a failure of the host
//! itself is a protocol error.

pub mod stdio;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use std::sync::{Arc, Mutex};
use workmem_agent::board::Worker;
use workmem_agent::tools::{self, DocumentAccess, Needs, ToolContext};
use workmem_llm::{Client, Tokenizer};
use workmem_runtime::Runtime;
use workmem_store::Session;

/// The memory as a resource.
const OVERVIEW_URI: &str = "workmem://memory/overview.md";

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

/// The MCP server over a [`Workspace`]; each tool call runs on a blocking thread.
#[derive(Clone)]
pub struct Server {
    /// What every tool reads; the session's own lock orders its writers.
    shared: Arc<Shared>,
    /// A board tool's or a document tool's handle, each held by one call at a time: a
    /// summary that waits on the model holds neither (one lock over every tool let a model
    /// that never answered stop all of them).
    worker: Arc<Mutex<Option<Worker>>>,
    documents: Arc<Mutex<Option<DocumentAccess>>>,
    tools: Arc<Vec<Tool>>,
}

struct Shared {
    session: Session,
    runtime: Runtime,
    /// Copied for each call ([`Tokenizer::fresh`]): its cache is one thread's.
    tokenizer: Mutex<Tokenizer>,
    llm: Option<Client>,
}

impl Server {
    pub fn new(workspace: Workspace) -> Result<Self, workmem_runtime::Error> {
        let history = workspace.session.next_seq().map_or(true, |next| next > 1);
        let dsl = dsl_reference(&workspace.runtime)?;
        let tools = tools::offered(history, workspace.worker.is_some(), workspace.documents.is_some())
            .map(|t| {
                let schema = match t.parameters() {
                    serde_json::Value::Object(map) => map,
                    _ => unreachable!("a tool's parameters are a JSON object"),
                };
                let description = if t.name == tools::UPDATE_MEMORY { format!("{}\n\n{dsl}", t.description) } else { t.description.to_string() };
                Tool::new(t.name, description, Arc::new(schema))
            })
            .collect();
        let Workspace { session, runtime, tokenizer, llm, worker, documents } = workspace;
        Ok(Server {
            shared: Arc::new(Shared { session, runtime, tokenizer: Mutex::new(tokenizer), llm }),
            worker: Arc::new(Mutex::new(worker)),
            documents: Arc::new(Mutex::new(documents)),
            tools: Arc::new(tools),
        })
    }

    /// Serves on standard input and output until the client closes them, each message read
    /// within `limits` (see [`stdio`]).
    pub async fn serve_stdio(self, limits: stdio::Limits) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (input, output) = rmcp::transport::stdio();
        self.serve(stdio::frame(input, output, limits)).await?.waiting().await?;
        Ok(())
    }
}

/// The engine's own instructions and example for the memory-update DSL (the end of its
/// update prompt), for a model that learns the DSL from the tool's description alone.
fn dsl_reference(runtime: &Runtime) -> Result<String, workmem_runtime::Error> {
    let prompt = runtime.new_memory()?.update_prompt("-")?;
    let from = prompt.find("## Instructions").unwrap_or(0);
    Ok(format!(
        "`dsl` is one block of workmem's memory-update DSL; the IDs to archive are those in working-memory/overview.md.\n\n{}",
        prompt[from..].replace("Answer with the DSL block only", "Pass the DSL block alone as `dsl`")
    ))
}

impl Server {
    /// The memory-update prompt for `task`, on the session's memory (loaded under its lock).
    fn update_prompt(&self, task: &str) -> Result<String, ErrorData> {
        let w = &self.shared;
        let prompt = || -> Result<String, workmem_commit::Error> {
            let locked = w.session.lock()?;
            let mut memory = workmem_commit::load(&w.runtime, &w.session, &locked)?;
            Ok(memory.update_prompt(task)?)
        };
        prompt().map_err(|e| {
            eprintln!("workmem mcp: the update prompt failed: {}", workmem_runtime::error_chain(&e).escape_debug());
            ErrorData::internal_error("the memory could not be loaded; the server's log (standard error) has the detail", None)
        })
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_prompts().enable_resources().enable_tools().build());
        config.server_info = Implementation::new("workmem", env!("CARGO_PKG_VERSION"));
        config.instructions = Some(
            "workmem keeps this conversation's working memory in a session: read and write its files (working-memory/overview.md is the summary, also the resource workmem://memory/overview.md), and record progress, learnings and exact snippets with update_memory (its description has the DSL; the prompt update_memory asks for an update for a task).".into(),
        );
        config
    }

    async fn list_resources(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        let overview = Resource::new(OVERVIEW_URI, "overview.md")
            .with_description("The working memory: Current Progress, Key Learnings (KL-#) and Verbatim Context (VC-#), as update_memory renders it")
            .with_mime_type("text/markdown");
        Ok(ListResourcesResult::with_all_items(vec![overview]))
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, _: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != OVERVIEW_URI {
            return Err(ErrorData::resource_not_found(format!("no resource {:?}: the one resource is {OVERVIEW_URI}", request.uri), None));
        }
        let text = self.shared.session.overview().map_err(|e| {
            eprintln!("workmem mcp: reading overview.md failed: {}", workmem_runtime::error_chain(&e).escape_debug());
            ErrorData::internal_error("overview.md could not be read; the server's log (standard error) has the detail", None)
        })?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, OVERVIEW_URI).with_mime_type("text/markdown")]).into())
    }

    async fn list_prompts(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>) -> Result<ListPromptsResult, ErrorData> {
        let task = PromptArgument::new("task").with_description("What the agent is working on: the update is for it").with_required(true);
        let prompt = Prompt::new(
            tools::UPDATE_MEMORY,
            Some("Asks the model for one memory update in the DSL, given the memory as it stands; send its answer to the update_memory tool"),
            Some(vec![task]),
        );
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(&self, request: GetPromptRequestParams, _: RequestContext<RoleServer>) -> Result<GetPromptResponse, ErrorData> {
        if request.name != tools::UPDATE_MEMORY {
            return Err(ErrorData::invalid_params(format!("no prompt {:?}: the one prompt is update_memory", request.name), None));
        }
        let task = request.arguments.as_ref().and_then(|a| a.get("task")).and_then(|t| t.as_str()).filter(|t| !t.trim().is_empty());
        let Some(task) = task else {
            return Err(ErrorData::invalid_params("the update_memory prompt takes a task: what the agent is working on", None));
        };
        let server = self.clone();
        let task = task.to_string();
        let prompt = tokio::task::spawn_blocking(move || server.update_prompt(&task))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the prompt's worker failed: {e}"), None))??;
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, prompt)]).into())
    }

    async fn list_tools(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, _: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let name = request.name.into_owned();
        let server = self.clone();
        let tool = name.clone();
        let output = tokio::task::spawn_blocking(move || {
            let needs = tools::Tool::named(&name).map(|t| t.needs);
            // Only the handle the tool needs is taken.
            let mut worker = (needs == Some(Needs::Board)).then(|| locked(&server.worker));
            let mut documents = (needs == Some(Needs::Documents)).then(|| locked(&server.documents));
            let Shared { session, runtime, tokenizer, llm } = &*server.shared;
            let tokenizer = locked(tokenizer).fresh();
            let mut cx = ToolContext {
                session,
                runtime,
                tokenizer: &tokenizer,
                llm: llm.as_ref(),
                board: worker.as_mut().and_then(|w| w.as_mut()),
                documents: documents.as_mut().and_then(|d| d.as_mut()),
            };
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

/// `m`'s value; one a panicking call left is still whole (every write to it is one call).
fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
