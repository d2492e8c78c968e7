//! The library's error type.
//!
//! Errors say what the caller did wrong apart from what the service could
//! not do. A bad request field is a typed [`Field`] (its stable code and
//! its place in the request); a missing thing has a typed [`Kind`]; an
//! error caused by another carries it as its `source` (printed by the CLI
//! as `caused by:` lines, joined into the message by the server). HTTP
//! statuses are the server's business (`server/error.rs`).

use crate::model::Violation;
use std::path::PathBuf;

/// Any error another one is caused by.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A place in an input file: `file:line:col` or a JSON/YAML pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// JSON path or OpenAPI pointer, when the input is structured.
    pub pointer: Option<String>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        if let Some(p) = &self.pointer {
            write!(f, " at {p}")?;
        }
        Ok(())
    }
}

/// One table of the request fields the library checks: variant, stable
/// code, and the field's path as a request spells it.
macro_rules! fields {
    ($($(#[$doc:meta])* $name:ident => $code:literal, $path:literal;)*) => {
        /// A request field at fault. Its [`code`](Field::code) is stable
        /// (clients branch on it); its [`path`](Field::path) is where the
        /// request holds it (`limit`, `caller.org`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Field { $($(#[$doc])* $name,)* }

        impl Field {
            /// Every field, in table order.
            pub const ALL: &'static [Field] = &[$(Field::$name,)*];

            /// The stable error code of a bad value in this field.
            pub fn code(self) -> &'static str {
                match self { $(Field::$name => $code,)* }
            }

            /// Where a request holds this field.
            pub fn path(self) -> &'static str {
                match self { $(Field::$name => $path,)* }
            }
        }
    };
}

fields! {
    SearchText => "invalid_search_text", "text";
    SearchVerb => "invalid_search_verb", "verb";
    SearchMode => "invalid_search_mode", "mode";
    /// More than [`MAX_LIMIT`](crate::engine::MAX_LIMIT) results.
    SearchLimit => "invalid_search_limit", "limit";
    SearchCandidates => "invalid_search_candidates", "candidates";
    SearchDependencies => "invalid_search_dependencies", "dependencies";
    SearchExplain => "invalid_search_explain", "explain";
    SearchWithParameters => "invalid_search_with_parameters", "with_parameters";
    SearchContext => "invalid_search_context", "context";
    Caller => "invalid_caller", "caller";
    CallerOrg => "invalid_caller_org", "caller.org";
    CallerAgent => "invalid_caller_agent", "caller.agent";
    CallerSession => "invalid_caller_session", "caller.session";
    CallerChannel => "invalid_caller_channel", "caller.channel";
    CallerGoal => "invalid_caller_goal", "caller.goal";
    ResolveVerb => "invalid_resolve_verb", "verb";
    ResolveDescription => "invalid_resolve_description", "description";
    ResolveContext => "invalid_resolve_context", "context";
    SelectSession => "invalid_select_session", "session";
    SelectMessage => "invalid_select_message", "message";
    SelectStrategy => "invalid_select_strategy", "strategy";
    SelectMaxTools => "invalid_select_max_tools", "max_tools";
    SelectMaxDomains => "invalid_select_max_domains", "max_domains";
    PromptTools => "invalid_prompt_tools", "tools";
    PromptBudget => "invalid_prompt_budget_tokens", "budget_tokens";
    PromptContext => "invalid_prompt_context", "context";
    ListOffset => "invalid_tools_offset", "offset";
    ListLimit => "invalid_tools_limit", "limit";
    ListDomain => "invalid_tools_domain", "domain";
    ListSource => "invalid_tools_source", "source";
    ListTool => "invalid_tools_tool", "tool";
    RegisterSource => "invalid_register_source", "source";
    RegisterFormat => "invalid_register_format", "format";
    RegisterStrict => "invalid_register_strict", "strict";
    RegisterBody => "invalid_register_body", "body";
    FailureTool => "invalid_failure_tool", "tool";
    FailureReason => "invalid_failure_reason", "reason";
    UsageTool => "invalid_usage_tool", "tool";
    UsageOrg => "invalid_usage_org", "org";
    UsageAgent => "invalid_usage_agent", "agent";
    UsageCost => "invalid_usage_cost", "cost";
    ApprovalRateLimit => "invalid_approval_rate_limit", "rate_limit";
    ApprovalBudget => "invalid_approval_budget", "budget";
    ApprovalAccess => "invalid_approval_access", "access";
    ApprovalHealthUrl => "invalid_approval_health_url", "health_url";
    ApprovalCostPerCall => "invalid_approval_cost_per_call", "cost_per_call";
    /// A category the approval sets that the ontology does not declare.
    ApprovalCategories => "invalid_approval_categories", "categories";
    /// Tools whose screening blocks them, registered with strict screening.
    Screening => "invalid_screened_tool", "tools";
    /// Approving an item screening blocked, without saying why.
    ApprovalOverride => "invalid_approval_override", "override_reason";
    /// The tool a call names (empty, too long).
    CallTool => "invalid_call_tool", "tool";
    /// A call's arguments that do not fit the tool's input schema (`at`:
    /// the JSON pointer of the argument).
    CallArguments => "invalid_call_arguments", "arguments";
    CallsOffset => "invalid_calls_offset", "offset";
    CallsLimit => "invalid_calls_limit", "limit";
    /// An approval decision (`approve` or `reject`).
    CallDecision => "invalid_call_decision", "decision";
    SourceKind => "invalid_source_kind", "kind";
    SourceLocation => "invalid_source_location", "location";
    SourceSchedule => "invalid_source_schedule_seconds", "schedule_seconds";
    SourceHealthUrl => "invalid_source_health_url", "health_url";
    /// A source's private allowances.
    SourceAllow => "invalid_source_allow", "allow";
    ReviewStatus => "invalid_review_status", "status";
    PendingOffset => "invalid_pending_offset", "offset";
    PendingLimit => "invalid_pending_limit", "limit";
    RejectReason => "invalid_reject_reason", "reason";
    SparqlQuery => "invalid_sparql_query", "query";
    PolicySource => "invalid_policy_source", "source";
    ExplainTool => "invalid_explain_tool", "tool";
    /// A server address (`serve --addr`).
    Addr => "invalid_addr", "addr";
    /// A command-line or harness setting (eval, plot).
    Setting => "invalid_setting", "setting";
}

/// How a call through the gateway was refused or failed (each its own
/// stable code, `no_upstream`, `limit_reached`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallFailure {
    /// The tool declares nowhere to call.
    NoUpstream,
    /// A rate limit or budget of the caller's organization is spent.
    Limited,
    /// The tool is switched off (health, an operator).
    SwitchedOff,
    /// The upstream needs a secret the caller's organization has not got.
    Credentials,
    /// The upstream answered with an error or could not be reached.
    Upstream,
    /// The upstream did not answer in time.
    UpstreamTimeout,
    /// The upstream's answer is over the size limit or breaks its schema.
    Output,
}

impl CallFailure {
    pub const ALL: &'static [CallFailure] = &[
        CallFailure::NoUpstream,
        CallFailure::Limited,
        CallFailure::SwitchedOff,
        CallFailure::Credentials,
        CallFailure::Upstream,
        CallFailure::UpstreamTimeout,
        CallFailure::Output,
    ];

    /// The stable error code.
    pub fn code(self) -> &'static str {
        match self {
            CallFailure::NoUpstream => "no_upstream",
            CallFailure::Limited => "limit_reached",
            CallFailure::SwitchedOff => "tool_switched_off",
            CallFailure::Credentials => "upstream_credentials_missing",
            CallFailure::Upstream => "upstream_error",
            CallFailure::UpstreamTimeout => "upstream_timeout",
            CallFailure::Output => "upstream_output_invalid",
        }
    }
}

/// What kind of thing was not found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Tool,
    Source,
    ReviewItem,
    /// A tool's constellation in the store (`toolgraph constellation`).
    Store,
    /// An MCP session (`Mcp-Session-Id`) of this key.
    McpSession,
    /// A held call waiting for (or decided by) an operator.
    Approval,
}

impl Kind {
    /// How a message names it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Source => "source",
            Kind::ReviewItem => "pending tool",
            Kind::Store => "store",
            Kind::McpSession => "MCP session",
            Kind::Approval => "approval request",
        }
    }

    /// The stable error code of a missing one.
    pub fn code(self) -> &'static str {
        match self {
            Kind::Tool => "tool_not_found",
            Kind::Source => "source_not_found",
            Kind::ReviewItem => "review_item_not_found",
            Kind::Store => "store_not_found",
            Kind::McpSession => "mcp_session_not_found",
            Kind::Approval => "approval_not_found",
        }
    }
}

/// Everything that can go wrong, by kind: what the caller did (invalid
/// input with its place, not found, forbidden, conflict) apart from what
/// the service could not do (unavailable, store, model). The HTTP layer maps
/// each kind to one status and a stable code (`server/error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed input (Turtle, JSON, YAML, OpenAPI, JSONL), with the place.
    #[error("{location}: {message}")]
    Parse { location: Location, message: String },
    /// A manifest parsed but a tool in it is unusable.
    #[error("{location}: tool `{tool}`: {message}")]
    InvalidTool {
        location: Location,
        tool: String,
        message: String,
    },
    /// A request the engine cannot answer as asked: a bad field or option.
    #[error("{message}")]
    Invalid {
        /// The request field at fault, when one is.
        field: Option<Field>,
        /// A place inside that field (`access.orgs[2]`), when deeper.
        at: Option<String>,
        message: String,
    },
    /// The thing asked for does not exist (or is not visible to the caller:
    /// the two are never told apart).
    #[error("no {} named `{name}`", .kind.name())]
    NotFound { kind: Kind, name: String },
    /// The caller may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The request conflicts with the current state (a name already taken,
    /// a change made meanwhile).
    #[error("{0}")]
    Conflict(String),
    /// A part the request needs is not ready (no model, a store or a source
    /// that does not answer).
    #[error("{message}")]
    Unavailable {
        message: String,
        #[source]
        source: Option<BoxError>,
    },
    /// The work ran past its time limit and was stopped.
    #[error("{0}")]
    Timeout(String),
    /// A call through the gateway refused or failed; `failure` says how.
    #[error("{message}")]
    Call {
        failure: CallFailure,
        message: String,
    },
    /// Seed constraints failed; the store was left unchanged.
    #[error("{} constraint violation(s); nothing was loaded", .0.len())]
    Violations(Vec<Violation>),
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store failed (RocksDB, a transaction, a record).
    #[error("store: {message}")]
    Store {
        message: String,
        #[source]
        source: Option<BoxError>,
    },
    /// A SPARQL query from `queries/` failed.
    #[error("sparql: {message}")]
    Sparql {
        message: String,
        #[source]
        source: Option<BoxError>,
    },
    /// The embedding model or ONNX Runtime is missing or broken.
    #[error("{message}")]
    Model {
        message: String,
        #[source]
        source: Option<BoxError>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A request the engine cannot answer as asked (no one field at fault).
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid {
            field: None,
            at: None,
            message: message.into(),
        }
    }

    /// A request field that is wrong, named.
    pub fn invalid_field(field: Field, message: impl Into<String>) -> Self {
        Error::Invalid {
            field: Some(field),
            at: None,
            message: message.into(),
        }
    }

    /// A place inside a request field that is wrong (`access.orgs[2]`).
    pub fn invalid_at(field: Field, at: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            field: Some(field),
            at: Some(at.into()),
            message: message.into(),
        }
    }

    /// Nothing of this kind has this name (for this caller).
    pub fn not_found(kind: Kind, name: impl Into<String>) -> Self {
        Error::NotFound {
            kind,
            name: name.into(),
        }
    }

    /// A part the request needs does not answer, because of `source`.
    pub fn unavailable(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Unavailable {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// A part the request needs is not there (nothing underneath).
    pub fn unavailable_msg(message: impl Into<String>) -> Self {
        Error::Unavailable {
            message: message.into(),
            source: None,
        }
    }

    /// A call refused or failed in this way.
    pub fn call(failure: CallFailure, message: impl Into<String>) -> Self {
        Error::Call {
            failure,
            message: message.into(),
        }
    }

    /// The store failed doing `message`, because of `source`.
    pub fn store(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Store {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The store is not as it should be (nothing underneath).
    pub fn store_msg(message: impl Into<String>) -> Self {
        Error::Store {
            message: message.into(),
            source: None,
        }
    }

    /// A SPARQL query failed, because of `source`.
    pub fn sparql(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Sparql {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// A query from `queries/` answered in a shape it should not.
    pub fn sparql_msg(message: impl Into<String>) -> Self {
        Error::Sparql {
            message: message.into(),
            source: None,
        }
    }

    /// The model failed doing `message`, because of `source`.
    pub fn model(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Model {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The model or its files are not as they should be.
    pub fn model_msg(message: impl Into<String>) -> Self {
        Error::Model {
            message: message.into(),
            source: None,
        }
    }

    /// The request field at fault and where inside it, when one is.
    pub fn field(&self) -> Option<(Field, String)> {
        match self {
            Error::Invalid {
                field: Some(f), at, ..
            } => Some((*f, at.clone().unwrap_or_else(|| f.path().to_string()))),
            _ => None,
        }
    }

    /// The message with every cause after it (`a: b: c`): one line for a
    /// client or a log.
    pub fn report(&self) -> String {
        let mut out = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            let text = c.to_string();
            if !out.ends_with(&text) {
                out.push_str(": ");
                out.push_str(&text);
            }
            cause = c.source();
        }
        out
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn parse(
        file: impl Into<String>,
        line: Option<u64>,
        column: Option<u64>,
        message: impl Into<String>,
    ) -> Self {
        Error::Parse {
            location: Location {
                file: file.into(),
                line,
                column,
                pointer: None,
            },
            message: message.into(),
        }
    }

    pub(crate) fn parse_at(
        file: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::Parse {
            location: Location {
                file: file.into(),
                line: None,
                column: None,
                pointer: Some(pointer.into()),
            },
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_codes_are_unique_and_say_invalid() {
        let mut seen = std::collections::HashSet::new();
        for f in Field::ALL {
            assert!(f.code().starts_with("invalid_"), "{f:?}");
            assert!(seen.insert(f.code()), "{} twice", f.code());
        }
    }

    #[test]
    fn a_report_carries_the_causes() {
        let e = Error::store(
            "record usage/x is unreadable",
            serde_json::from_str::<f64>("null").unwrap_err(),
        );
        let r = e.report();
        assert!(
            r.starts_with("store: record usage/x is unreadable: "),
            "{r}"
        );
        assert!(r.contains("invalid type"), "{r}");
        assert!(std::error::Error::source(&e).is_some());
        let io = Error::io("/x/y", std::io::Error::other("boom"));
        assert_eq!(io.report(), "/x/y: boom");
    }
}
