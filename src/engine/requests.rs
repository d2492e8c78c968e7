//! The engine's request and response types (what the HTTP API and the CLI
//! send and receive).

use crate::embed::{Embedder, SyncReport};
use crate::graph::LoadReport;
use crate::model::{Mention, Provenance, Tool};
use crate::policy::{Caller, Warning};
use crate::rank::{Calibration, Clarify, Mode, RankConfig, ScoreDetails};
use crate::select::Strategy;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// Which embedder the engine uses.
#[derive(Debug, Clone)]
pub enum Embeddings {
    /// The real MiniLM model from this directory (see `scripts/setup.sh`).
    Model(PathBuf),
    /// An embedder the caller built (another model, or a test double).
    Custom(Arc<dyn Embedder>),
    /// No dense channel.
    Off,
}

/// How to open an engine.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Where the engine keeps its files (the embedded store under `graph/`,
    /// vectors under `vectors/`); `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    /// Keep the catalog on this graph server instead (Bolt).
    pub graph: Option<crate::graph::GraphServer>,
    pub embeddings: Embeddings,
    /// Progress bars on a terminal.
    pub progress: bool,
    pub rank: RankConfig,
    pub calibration: Calibration,
    /// Refuse loads that violate the seed constraints (default true).
    pub strict: bool,
}

impl EngineOptions {
    /// In-memory engine with the given embeddings.
    pub fn memory(embeddings: Embeddings) -> Self {
        Self {
            data_dir: None,
            graph: None,
            embeddings,
            progress: false,
            rank: RankConfig::default(),
            calibration: Calibration::default(),
            strict: true,
        }
    }
}

/// Matches a search returns when it does not say (`limit` 0 or absent).
pub const DEFAULT_LIMIT: usize = 10;
/// The most matches one search returns, for every transport: a larger
/// `limit` is refused (`invalid_search_limit`), never honoured or clamped
/// silently.
pub const MAX_LIMIT: usize = 100;
/// The longest request text (search text, a turn's message, a resolve
/// context) in bytes: the extractor reads no further.
pub const MAX_TEXT: usize = 64 * 1024;
/// The longest context a prompt renders (bytes).
pub const MAX_PROMPT_CONTEXT: usize = 4096;
/// The longest planner verb in bytes.
pub const MAX_VERB: usize = 256;

/// A search request.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// Free-text context ("Southwest flight 175 tomorrow").
    #[serde(default)]
    pub text: String,
    /// Planner verb (`MAKE_RESERVATION`), optional.
    #[serde(default)]
    pub verb: Option<String>,
    #[serde(default)]
    pub mode: Mode,
    /// Maximum matches returned (0 or absent: 10; at most 100).
    #[serde(default)]
    pub limit: usize,
    /// Restrict ranking to these tool ids/names.
    #[serde(default)]
    pub candidates: Option<Vec<String>>,
    /// Expand `dependsOn` into an ordered prerequisite list per match.
    #[serde(default)]
    pub dependencies: bool,
    /// Who is asking: the policy fixes which tools they may see.
    #[serde(default)]
    pub caller: Caller,
    /// Include each match's graph paths and matched terms (default true);
    /// the channel scores and `decided_by` are always there. Paths are
    /// only worked out when asked.
    #[serde(default = "yes")]
    pub explain: bool,
    /// Include each match's parameters as a JSON Schema (`input_schema`).
    #[serde(default)]
    pub with_parameters: bool,
    /// The conversation so far (earlier turns, oldest first, one a line):
    /// evidence of what it is about, weighed below `text` (at most
    /// 64 KiB; its last 4 KiB are read). Without it, a caller's `session`
    /// supplies its own earlier turns.
    #[serde(default)]
    pub context: Option<String>,
}

fn yes() -> bool {
    true
}

impl Default for SearchRequest {
    fn default() -> Self {
        Self {
            text: String::new(),
            verb: None,
            mode: Mode::default(),
            limit: 0,
            candidates: None,
            dependencies: false,
            caller: Caller::default(),
            explain: true,
            with_parameters: false,
            context: None,
        }
    }
}

/// One ranked tool.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Match {
    /// The tool's callable name.
    pub tool: String,
    /// Its catalog id (differs from the name for dataset variants).
    pub id: String,
    pub score: f32,
    /// Calibrated probability that this is a right tool.
    pub confidence: f32,
    pub description: String,
    pub categories: Vec<String>,
    pub details: ScoreDetails,
    /// Tools to run first, in order (with `dependencies`), among those the
    /// caller may see.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prerequisites: Vec<String>,
    /// With `dependencies`: the prerequisites as ordered steps, each with
    /// the parameter it feeds and its alternatives, and those left out
    /// because the request gives what they make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::rank::Plan>,
    /// The caller's agent must have this call approved first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_approval: bool,
    /// Its parameters as a JSON Schema object (with `with_parameters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub input_schema: Option<serde_json::Value>,
}

/// The tool-selection prompt: a search's matches (or tools named), rendered
/// for an LLM within a token budget.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptRequest {
    /// What the planner wants to do; the best matches are rendered.
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub verb: Option<String>,
    /// Render these tools (names or ids) instead of searching.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Matches to render (as a search's `limit`).
    #[serde(default)]
    pub limit: usize,
    /// About this many tokens at most (4 characters a token; default 800).
    #[serde(default = "default_budget")]
    pub budget_tokens: usize,
    /// What the planner knows so far (customer, request, plan), rendered
    /// under "Current context" (at most 4,096 bytes).
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub caller: Caller,
}

/// A prompt's token budget when the request does not say.
pub const DEFAULT_PROMPT_TOKENS: usize = 800;
/// The largest token budget a prompt may ask for.
pub const MAX_PROMPT_TOKENS: usize = 32_000;

fn default_budget() -> usize {
    DEFAULT_PROMPT_TOKENS
}

impl Default for PromptRequest {
    fn default() -> Self {
        Self {
            text: String::new(),
            verb: None,
            tools: None,
            limit: 0,
            budget_tokens: DEFAULT_PROMPT_TOKENS,
            context: None,
            caller: Caller::default(),
        }
    }
}

/// A rendered tool-selection prompt.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Prompt {
    /// The tools, one block each: name, category, description, parameters.
    pub prompt: String,
    /// The tools rendered, in order (those past the budget are left out).
    pub tools: Vec<String>,
    /// Tools the caller's goal names that a policy layer removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

/// One `dependsOn` edge: `tool` needs `on` to run first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DependencyEdge {
    pub tool: String,
    pub on: String,
    /// `curated` when declared (manifest or Turtle), `extracted` when inferred.
    pub provenance: Provenance,
    /// 1 for declared edges; the inference's confidence otherwise.
    pub confidence: f32,
    /// Ranking follows it (declared, or inferred at or above the threshold).
    pub followed: bool,
    #[serde(flatten)]
    pub facts: crate::model::DependencyFacts,
}

/// The answer to a search.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SearchResponse {
    pub matches: Vec<Match>,
    /// Close candidates that nothing in the request tells apart.
    pub ambiguous: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clarify: Option<Clarify>,
    /// Nothing fits well enough: the planner should not call any of these.
    pub abstain: bool,
    pub mentions: Vec<Mention>,
    pub mode: Mode,
    /// Tools the caller's goal names that a policy layer removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

/// `resolve` input: a verb the planner wants to execute.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveRequest {
    pub verb: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub caller: Caller,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// A catalog tool does it: call that instead.
    Substitute,
    /// Nothing does it confidently: break the verb into smaller steps.
    Decompose,
}

/// `resolve` output.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Resolution {
    pub decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub confidence: f32,
    pub nearest: Vec<Match>,
    pub reason: String,
}

/// Which tools a listing keeps.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ToolFilter {
    /// A domain: IRI, local name (`travel`) or label.
    #[serde(default)]
    pub domain: Option<String>,
    /// A source as loaded (`seeds/travel.ttl`).
    #[serde(default)]
    pub source: Option<String>,
}

/// What a reload did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ReloadReport {
    pub files: Vec<String>,
    /// Sources that no longer exist on disk, removed.
    pub removed: Vec<String>,
    pub store: LoadReport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<SyncReport>,
}

/// What a load did, including the re-embedding it caused.
#[derive(Debug, Clone, Serialize)]
pub struct LoadOutcome {
    pub store: LoadReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<SyncReport>,
    pub files: Vec<String>,
    /// Screening of the manifests loaded (tools with findings), when asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screening: Vec<crate::screen::Screening>,
}

/// A listing of the tools a caller may see.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ListRequest {
    #[serde(default)]
    pub caller: Caller,
    #[serde(default, flatten)]
    pub filter: ToolFilter,
    /// Skip this many tools (catalog order).
    #[serde(default)]
    pub offset: usize,
    /// At most this many tools (0 = all).
    #[serde(default)]
    pub limit: usize,
}

/// A tool as one caller sees it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ListedTool {
    #[serde(flatten)]
    pub tool: Tool,
    /// The caller's agent must have a call approved first.
    #[serde(default)]
    pub requires_approval: bool,
}

/// One page of a listing.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ToolPage {
    pub tools: Vec<ListedTool>,
    /// Tools the caller may see under the filter, over all pages.
    pub total: usize,
    pub offset: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

/// A domain and how many of its tools a caller may see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DomainCount {
    /// Local name (`travel`): `domain:travel` in the grouping.
    pub domain: String,
    pub iri: String,
    pub label: String,
    pub tools: usize,
}

/// One conversation turn to choose tools for.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectRequest {
    pub session: String,
    pub message: String,
    #[serde(default)]
    pub caller: Caller,
    /// Default: the caller's organization's (`tg:selectionStrategy`), else
    /// `domains`.
    #[serde(default)]
    pub strategy: Option<Strategy>,
    /// Default 10 (domain selection), 15 (the intent broker's cap).
    #[serde(default)]
    pub max_tools: Option<usize>,
    /// Default 3 (domain selection).
    #[serde(default)]
    pub max_domains: Option<usize>,
}

/// What a registration did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Registration {
    /// The source the tools are registered under.
    pub source: String,
    /// Tools this source now holds.
    pub tools: usize,
    pub store: LoadReport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<SyncReport>,
    /// What the importer had to decide for itself (a verb minted from a
    /// tool's name, …).
    pub warnings: Vec<String>,
    /// Screening of the registered manifests: the tools with findings,
    /// worst first within each (see the airlock's review for the codes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screening: Vec<crate::screen::Screening>,
}

/// One call a planner or executor made, to count against the tool's usage
/// policy (`POST /v1/usage`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageEvent {
    /// The tool called (name or id).
    pub tool: String,
    /// The organization the call was made for (a key bound to one implies it).
    #[serde(default)]
    pub org: Option<String>,
    /// The agent that made it.
    #[serde(default)]
    pub agent: Option<String>,
    /// Cost units (budgets in cost units count this; default 1).
    #[serde(default)]
    pub cost: Option<f64>,
    /// The conversation it was called in: the intent broker keeps a
    /// session's used tools in its selections.
    #[serde(default)]
    pub session: Option<String>,
}

/// Where a tool stands for an organization after a recorded call.
#[derive(Debug, Clone, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct UsageReport {
    pub tool: String,
    pub org: String,
    /// Calls in the last minute, and the limit.
    pub calls_last_minute: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<u32>,
    /// Spent in the current budget period, and the budget.
    pub spent: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::policy::limits::Budget>,
    pub total_calls: u64,
    /// False when the organization may no longer see the tool (the reason
    /// says which limit).
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
