//! The MCP endpoint at `/mcp` (Streamable HTTP, rmcp): toolgraph's own three
//! tools, `find_tools`, `resolve_verb` and `select_tools`, answered for the
//! caller the request's key stands for, so an MCP client never discovers a
//! tool its policy hides. The key check runs before (the same middleware as
//! `/v1`); the principal travels in the HTTP request's extensions.

use super::{Principal, Shared};
use crate::engine::{Caller, ResolveRequest, SearchRequest, SelectRequest};
use axum::Router;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// `find_tools` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindTools {
    /// What the planner wants to do, in words ("reserve a seat on Southwest
    /// flight 175 tomorrow"); a planner verb such as MAKE_RESERVATION works too.
    pub query: String,
    /// How many tools to return (default 10, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Also list, right after each tool, the tools it needs to run first
    /// (declared dependencies, then confidently inferred ones).
    #[serde(default)]
    pub dependencies: Option<bool>,
}

/// `resolve_verb` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveVerb {
    /// The planner verb (`CONVERT_CURRENCY`).
    pub verb: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The situation ("100 USD to EUR").
    #[serde(default)]
    pub context: Option<String>,
}

/// `select_tools` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectTools {
    /// The conversation id.
    pub session: String,
    /// The user's message this turn.
    pub message: String,
}

/// toolgraph as an MCP server.
#[derive(Debug, Clone)]
pub struct ToolgraphMcp {
    state: Shared,
    tool_router: ToolRouter<Self>,
}

fn caller_of(parts: &axum::http::request::Parts) -> Result<Caller, ErrorData> {
    let principal = parts
        .extensions
        .get::<Principal>()
        .ok_or_else(|| ErrorData::internal_error("the request has no principal", None))?;
    principal
        .caller(Caller::default())
        .map_err(|e| ErrorData::invalid_params(e.message, None))
}

fn answer<T: serde::Serialize>(
    result: std::result::Result<crate::error::Result<T>, tokio::task::JoinError>,
) -> Result<CallToolResult, ErrorData> {
    match result {
        Ok(Ok(v)) => serde_json::to_value(&v)
            .map(CallToolResult::structured)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
        Ok(Err(e)) => {
            let api = super::error::ApiError::from(e);
            let data = Some(serde_json::json!({"code": api.code.name(), "field": api.field}));
            if api.status().is_client_error() {
                Err(ErrorData::invalid_params(api.message, data))
            } else {
                Err(ErrorData::internal_error(api.message, data))
            }
        }
        Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
    }
}

#[tool_router]
impl ToolgraphMcp {
    pub fn new(state: Shared) -> Self {
        Self {
            state,
            tool_router: Self::tool_router(),
        }
    }

    /// Find the tools for a task, best first, among the tools this caller may
    /// use: each with its description, input schema (`input_schema`), score,
    /// calibrated confidence and why it was chosen (the `/v1/search` answer).
    #[tool(annotations(
        title = "Find tools",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn find_tools(
        &self,
        rmcp::handler::server::tool::Extension(parts): rmcp::handler::server::tool::Extension<
            axum::http::request::Parts,
        >,
        Parameters(args): Parameters<FindTools>,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = caller_of(&parts)?;
        let engine = self.state.engine.clone();
        answer(
            tokio::task::spawn_blocking(move || {
                engine.search(&SearchRequest {
                    text: args.query,
                    limit: args.limit.unwrap_or(0),
                    caller,
                    explain: false,
                    with_parameters: true,
                    dependencies: args.dependencies.unwrap_or(false),
                    ..SearchRequest::default()
                })
            })
            .await,
        )
    }

    /// For a planner verb: substitute the one catalog tool that does it
    /// confidently, or advise decomposing it (with the nearest tools).
    #[tool(annotations(
        title = "Resolve a planner verb",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn resolve_verb(
        &self,
        rmcp::handler::server::tool::Extension(parts): rmcp::handler::server::tool::Extension<
            axum::http::request::Parts,
        >,
        Parameters(args): Parameters<ResolveVerb>,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = caller_of(&parts)?;
        let engine = self.state.engine.clone();
        answer(
            tokio::task::spawn_blocking(move || {
                engine.resolve(&ResolveRequest {
                    verb: args.verb,
                    description: args.description,
                    context: args.context,
                    caller,
                })
            })
            .await,
        )
    }

    /// The tools for this turn of a conversation: whole domains the message
    /// is about, kept in recency order (it remembers the session).
    #[tool(annotations(
        title = "Select tools for a turn",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn select_tools(
        &self,
        rmcp::handler::server::tool::Extension(parts): rmcp::handler::server::tool::Extension<
            axum::http::request::Parts,
        >,
        Parameters(args): Parameters<SelectTools>,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = caller_of(&parts)?;
        let engine = self.state.engine.clone();
        answer(
            tokio::task::spawn_blocking(move || {
                engine.select(&SelectRequest {
                    session: args.session,
                    message: args.message,
                    caller,
                    ..SelectRequest::default()
                })
            })
            .await,
        )
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ToolgraphMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolgraph", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Call find_tools with what you want to do; it returns the tools you may use, \
                 best first, with their input schemas and a calibrated confidence.",
            )
    }
}

pub(crate) fn routes(state: Shared) -> Router {
    let mcp_state = state.clone();
    let service: StreamableHttpService<ToolgraphMcp, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(ToolgraphMcp::new(mcp_state.clone())),
            Default::default(),
            StreamableHttpServerConfig::default()
                .disable_allowed_hosts()
                .with_max_request_body_bytes(state.limits.body_bytes),
        );
    Router::new().nest_service("/mcp", service)
}
