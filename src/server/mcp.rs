//! The MCP endpoint at `/mcp` (Streamable HTTP, rmcp): toolgraph's own three
//! tools, `find_tools`, `resolve_verb` and `select_tools`, answered for the
//! caller the request's key stands for, so an MCP client never discovers a
//! tool its policy hides. The key check runs before (the same middleware as
//! `/v1`); the principal travels in the HTTP request's extensions.
//!
//! In front of rmcp, [`guard`]: an MCP session belongs to the key that
//! opened it (another key's `Mcp-Session-Id` is answered like an unknown
//! one, for every method, `DELETE` included); a key holds at most
//! [`PER_KEY`] sessions and the server [`MAX_SESSIONS`] (the least recently
//! used is closed to admit a new one: 10,000 `initialize` calls took RSS
//! from 607 MB to 1.4 GB); a body that is not JSON gets JSON-RPC's parse
//! error (-32700), JSON that is no message its invalid request (-32600),
//! both with 400, not rmcp's 415.

use super::error::{ApiError, Code};
use super::{Principal, Shared};
use crate::engine::{Caller, PromptRequest, ResolveRequest, SearchRequest, SelectRequest};
use crate::error::Kind;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_router};
use serde::Deserialize;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

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
    /// The conversation so far (earlier turns, oldest first), weighed below `query`.
    #[serde(default)]
    pub context: Option<String>,
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

/// `build_prompt` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildPrompt {
    /// What the planner wants to do: its best matches are rendered.
    #[serde(default)]
    pub query: Option<String>,
    /// Render these tools (names) instead of searching.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// What the planner knows so far (customer, request, plan).
    #[serde(default)]
    pub context: Option<String>,
    /// About this many tokens at most (default 800).
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// `call_tool` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallTool {
    /// The tool's name, as `find_tools` gave it.
    pub name: String,
    /// Its arguments (the `input_schema` find_tools gave says which).
    #[serde(default)]
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
}

/// toolgraph as an MCP server (one per MCP session).
#[derive(Debug, Clone)]
pub struct ToolgraphMcp {
    state: Shared,
    tool_router: ToolRouter<Self>,
    /// Tools `find_tools` found in this session: listed by `tools/list` and
    /// callable by name (progressive disclosure).
    found: Arc<Mutex<Vec<rmcp::model::Tool>>>,
}

/// A `tools/list` request's `query` (the draft list-filtering proposal),
/// read by the guard.
#[derive(Debug, Clone)]
struct ListQuery(String);

/// Tools a session's list holds besides toolgraph's own.
const MAX_FOUND: usize = 100;

/// A found tool as an MCP client lists it.
fn listed(m: &crate::engine::Match) -> rmcp::model::Tool {
    let schema = match &m.input_schema {
        Some(serde_json::Value::Object(o)) => o.clone(),
        _ => serde_json::Map::from_iter([("type".to_string(), serde_json::json!("object"))]),
    };
    rmcp::model::Tool::new(m.tool.clone(), m.description.clone(), Arc::new(schema))
}

/// A gateway answer as an MCP tool result: an MCP upstream's own result as
/// it is; an HTTP answer as structured content; a held call says so.
fn call_result(answer: crate::gateway::CallAnswer) -> CallToolResult {
    use crate::gateway::CallStatus;
    if let CallStatus::PendingApproval = answer.status {
        let v = serde_json::to_value(&answer).unwrap_or_default();
        let mut r = CallToolResult::structured(v);
        r.content = vec![rmcp::model::ContentBlock::text(format!(
            "`{}` requires approval: the call is held as approval request {} and runs once an operator approves it",
            answer.tool,
            answer.approval.as_deref().unwrap_or("?")
        ))];
        return r;
    }
    let failed = matches!(answer.status, CallStatus::Error);
    let result = answer.result.unwrap_or_default();
    if result
        .get("content")
        .is_some_and(serde_json::Value::is_array)
        && let Ok(mut r) = serde_json::from_value::<CallToolResult>(result.clone())
    {
        r.is_error = Some(failed || r.is_error == Some(true));
        return r;
    }
    if failed {
        let mut r = CallToolResult::structured_error(result);
        r.is_error = Some(true);
        r
    } else {
        CallToolResult::structured(result)
    }
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
            found: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Engine work on the blocking pool under the request time limit (tool
    /// calls run on rmcp's session tasks, not the HTTP request's).
    fn limited<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> tokio::task::JoinHandle<T> {
        let until = Some(std::time::Instant::now() + self.state.limits.request_timeout);
        tokio::task::spawn_blocking(move || crate::deadline::within(until, f))
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
        peer: rmcp::Peer<rmcp::RoleServer>,
        Parameters(args): Parameters<FindTools>,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = caller_of(&parts)?;
        let engine = self.state.engine.clone();
        let found = self
            .limited(move || {
                engine.search(&SearchRequest {
                    text: args.query,
                    limit: args.limit.unwrap_or(0),
                    caller,
                    explain: false,
                    with_parameters: true,
                    dependencies: args.dependencies.unwrap_or(false),
                    context: args.context,
                    ..SearchRequest::default()
                })
            })
            .await;
        if let Ok(Ok(response)) = &found
            && self.disclose(&response.matches)
            && let Err(e) = peer.notify_tool_list_changed().await
        {
            tracing::debug!(error = %e, "notifying an MCP client of its new tools");
        }
        answer(found)
    }

    /// Call a tool find_tools returned, by name, with its arguments: the
    /// caller's policy, the tool's input schema, rate limits, budgets and
    /// approval are enforced; the tool's own answer comes back.
    #[tool(annotations(
        title = "Call a tool",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = true
    ))]
    async fn call_tool(
        &self,
        rmcp::handler::server::tool::Extension(parts): rmcp::handler::server::tool::Extension<
            axum::http::request::Parts,
        >,
        Parameters(args): Parameters<CallTool>,
    ) -> Result<CallToolResult, ErrorData> {
        self.proxy(&parts, args.name, args.arguments).await
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
            self.limited(move || {
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

    /// The tool-selection prompt for this caller: its goal, the context
    /// given, the tools (a search's best, or those named) with their
    /// parameters within a token budget, and the answer expected.
    #[tool(annotations(
        title = "Build the tool-selection prompt",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn build_prompt(
        &self,
        rmcp::handler::server::tool::Extension(parts): rmcp::handler::server::tool::Extension<
            axum::http::request::Parts,
        >,
        Parameters(args): Parameters<BuildPrompt>,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = caller_of(&parts)?;
        let engine = self.state.engine.clone();
        answer(
            self.limited(move || {
                engine.prompt(&PromptRequest {
                    text: args.query.unwrap_or_default(),
                    tools: args.tools,
                    context: args.context,
                    budget_tokens: args
                        .budget_tokens
                        .unwrap_or(crate::engine::DEFAULT_PROMPT_TOKENS),
                    caller,
                    ..PromptRequest::default()
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
            self.limited(move || {
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

impl ToolgraphMcp {
    /// Adds found tools to the session's list; says whether any was new.
    fn disclose(&self, matches: &[crate::engine::Match]) -> bool {
        let mut found = self.found.lock().unwrap_or_else(PoisonError::into_inner);
        let mut added = false;
        for m in matches {
            if self.tool_router.has_route(&m.tool) || found.iter().any(|t| t.name == m.tool) {
                continue;
            }
            if found.len() >= MAX_FOUND {
                found.remove(0);
            }
            found.push(listed(m));
            added = true;
        }
        added
    }

    /// A call through the gateway for the session's caller.
    async fn proxy(
        &self,
        parts: &axum::http::request::Parts,
        tool: String,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = caller_of(parts)?;
        let gateway = self.state.gateway.clone();
        let req = crate::gateway::CallRequest {
            tool,
            arguments: arguments.map_or(serde_json::Value::Null, serde_json::Value::Object),
            caller,
        };
        match self.limited(move || gateway.call(&req)).await {
            Ok(Ok(answer)) => Ok(call_result(answer)),
            // A refused or failed call is the tool's answer, so that the
            // model reads why (a protocol error reaches no model): the
            // error's code, message and field, as `/v1/call` gives them.
            Ok(Err(e)) => {
                let api = super::error::ApiError::from(e);
                let body = serde_json::json!({"error": {
                    "code": api.code.name(), "message": api.message, "field": api.field,
                }});
                let mut r = CallToolResult::structured_error(body);
                r.content = vec![rmcp::model::ContentBlock::text(format!(
                    "{}: {}",
                    api.code.name(),
                    api.message
                ))];
                Ok(r)
            }
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }
}

impl ServerHandler for ToolgraphMcp {
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        if self.tool_router.has_route(&request.name) {
            let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
            return self.tool_router.call(tcc).await;
        }
        // Any other name: a tool the caller may call (found or not), proxied.
        let parts = context
            .extensions
            .get::<axum::http::request::Parts>()
            .ok_or_else(|| ErrorData::internal_error("the request has no HTTP parts", None))?;
        self.proxy(parts, request.name.to_string(), request.arguments)
            .await
            .map(Into::into)
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        let mut tools = self.tool_router.list_all();
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let query = parts.and_then(|p| p.extensions.get::<ListQuery>()).cloned();
        match (query, parts) {
            // The draft list-filtering proposal: the best tools for `query`.
            (Some(ListQuery(q)), Some(parts)) => {
                let caller = caller_of(parts)?;
                let engine = self.state.engine.clone();
                let found = self
                    .limited(move || {
                        engine.search(&SearchRequest {
                            text: q,
                            caller,
                            explain: false,
                            with_parameters: true,
                            ..SearchRequest::default()
                        })
                    })
                    .await;
                if let Ok(Ok(r)) = found {
                    tools.extend(r.matches.iter().map(listed));
                }
            }
            _ => tools.extend(
                self.found
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .cloned(),
            ),
        }
        Ok(rmcp::model::ListToolsResult {
            tools,
            ..Default::default()
        })
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("toolgraph", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Call find_tools with what you want to do; it returns the tools you may use, \
                 best first, with their input schemas and a calibrated confidence. Then call one \
                 with call_tool {name, arguments}, or by its own name: the tools find_tools found \
                 are added to this session's tools/list.",
        )
    }
}

/// Sessions the server keeps at once.
pub const MAX_SESSIONS: usize = 1024;
/// Sessions one key keeps at once.
pub const PER_KEY: usize = 32;
const SESSION_HEADER: &str = "mcp-session-id";

/// Who opened each MCP session, least recently used first out.
#[derive(Debug)]
pub(crate) struct Sessions {
    manager: Arc<LocalSessionManager>,
    /// Session id -> the key id that opened it.
    owners: Mutex<lru::LruCache<String, String>>,
    body_bytes: usize,
    gauge: prometheus_client::metrics::gauge::Gauge,
}

impl Sessions {
    fn owner_is(&self, session: &str, key: &str) -> bool {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners.get(session).is_some_and(|o| o == key)
    }

    /// Records a new session of `key`; closes those it pushes out (the
    /// key's oldest past [`PER_KEY`], the server's oldest past the cap).
    async fn admit(&self, session: String, key: String) {
        let victims = {
            let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
            let mut victims: Vec<String> = owners
                .iter()
                .rev()
                .filter(|(_, k)| **k == key)
                .map(|(s, _)| s.clone())
                .collect();
            let keep = PER_KEY.saturating_sub(1);
            victims.truncate(victims.len().saturating_sub(keep));
            for v in &victims {
                owners.pop(v);
            }
            if let Some((oldest, _)) = owners.push(session, key) {
                victims.push(oldest);
            }
            self.gauge
                .set(i64::try_from(owners.len()).unwrap_or(i64::MAX));
            victims
        };
        for v in victims {
            let id: rmcp::transport::streamable_http_server::session::SessionId = v.into();
            if let Err(e) =
                rmcp::transport::streamable_http_server::session::SessionManager::close_session(
                    &*self.manager,
                    &id,
                )
                .await
            {
                tracing::debug!(error = %e, "closing an evicted MCP session");
            }
        }
    }

    fn forget(&self, session: &str) {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners.pop(session);
        self.gauge
            .set(i64::try_from(owners.len()).unwrap_or(i64::MAX));
    }
}

/// Sessions bound to their key, bounded, and JSON-RPC's parse error.
async fn guard(State(sessions): State<Arc<Sessions>>, req: Request, next: Next) -> Response {
    let key = req
        .extensions()
        .get::<Principal>()
        .map(|p| p.id.clone())
        .unwrap_or_default();
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(s) = &session
        && !sessions.owner_is(s, &key)
    {
        return ApiError::new(
            Code::NotFound(Kind::McpSession),
            "no MCP session with this id for this key",
        )
        .into_response();
    }
    let deleting = req.method() == Method::DELETE;
    let req = if req.method() == Method::POST {
        match json_body(req, sessions.body_bytes).await {
            Ok(r) => r,
            Err(resp) => return resp,
        }
    } else {
        req
    };
    let resp = next.run(req).await;
    match session {
        None => {
            if let Some(new) = resp
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                sessions.admit(new.to_string(), key).await;
            }
        }
        Some(s) if deleting && resp.status().is_success() => sessions.forget(&s),
        Some(_) => {}
    }
    resp
}

/// The body, checked to be a JSON-RPC message; otherwise JSON-RPC's error.
async fn json_body(req: Request, limit: usize) -> Result<Request, Response> {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| {
        ApiError::new(
            Code::PayloadTooLarge,
            format!("an MCP message is at most {limit} bytes"),
        )
        .into_response()
    })?;
    // JSON-RPC's own errors: -32700 for a body that is not JSON, -32600
    // for JSON that is no message (rmcp answered both 415).
    // Read exactly as rmcp will (from the bytes: a duplicate key is an
    // error there, not the last value as in a `Value`).
    let problem = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes)
        .err()
        .map(|e| match e.classify() {
            serde_json::error::Category::Data => (-32600, format!("Invalid Request: {e}")),
            _ => (-32700, format!("Parse error: {e}")),
        });
    if let Some((code, message)) = problem {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": code, "message": message},
        });
        let mut resp = (StatusCode::BAD_REQUEST, axum::Json(body)).into_response();
        resp.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return Err(resp);
    }
    let mut parts = parts;
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && v.get("method").and_then(serde_json::Value::as_str) == Some("tools/list")
        && let Some(q) = v
            .pointer("/params/query")
            .and_then(serde_json::Value::as_str)
        && !q.trim().is_empty()
    {
        parts.extensions.insert(ListQuery(q.to_string()));
    }
    Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
}

pub(crate) fn routes(state: Shared) -> Router {
    let mcp_state = state.clone();
    let manager = Arc::new(LocalSessionManager::default());
    let sessions = Arc::new(Sessions {
        manager: manager.clone(),
        owners: Mutex::new(lru::LruCache::new(
            NonZeroUsize::new(MAX_SESSIONS).unwrap_or(NonZeroUsize::MIN),
        )),
        body_bytes: state.limits.body_bytes,
        gauge: state.metrics.mcp_sessions.clone(),
    });
    // Hosts and origins are checked for every route by the server's own
    // middleware (`browser_guard`), MCP included.
    let service: StreamableHttpService<ToolgraphMcp, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(ToolgraphMcp::new(mcp_state.clone())),
            manager,
            StreamableHttpServerConfig::default()
                .disable_allowed_hosts()
                .with_max_request_body_bytes(state.limits.body_bytes),
        );
    Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(sessions, guard))
}
