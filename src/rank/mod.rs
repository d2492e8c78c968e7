//! Joint ranking: graph + dense + lexical channels, fusion, steps,
//! disambiguation, calibrated confidence. Pure functions over a catalog
//! snapshot, a [`Scope`](crate::scope::Scope) and the inputs the engine
//! gathered (graph hits, query vectors); the engine does the I/O.
//!
//! - [`query`]: what a request says (mentions, steps, texts), parsed once;
//! - [`channels`]: the graph channel's evidence and paths, per query text;
//! - [`dense`]: cosines from an int8 pass with a proven error bound, exact
//!   for a shortlist and on demand;
//! - [`fusion`]: fused scores and the orders they define;
//! - [`pipeline`]: channels → fuse (a shortlist whose answer is proven
//!   equal to scoring every tool) → steps → disambiguate → step cover,
//!   keeping a bounded top-k;
//! - [`disambiguate`], [`confidence`]: close calls and calibrated probabilities;
//! - [`prerequisites`]: with `dependencies`, each match's prerequisites
//!   listed right after it.

pub(crate) mod channels;
mod confidence;
pub(crate) mod dense;
mod disambiguate;
pub(crate) mod fusion;
pub(crate) mod payload;
pub(crate) mod pipeline;
mod prerequisites;
pub(crate) mod query;
pub mod stages;
pub(crate) mod supplied;

pub use confidence::{Calibration, CalibrationReport, ReliabilityBin, fit_calibration};
pub use disambiguate::{Clarify, Contender};

/// The texts a search embeds for a request: the whole (with the stated
/// verb), then each step's when it splits into two or more (none else).
pub fn texts_to_embed(text: &str, verb: Option<&str>) -> (String, Vec<String>) {
    query::embedding_texts(text, verb, true)
}

use crate::graph::Relation;
use serde::{Deserialize, Serialize};

/// Which channels rank.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Graph + dense + lexical, fused (the default).
    #[default]
    Joint,
    Graph,
    Dense,
    Lexical,
}

impl std::str::FromStr for Mode {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "joint" => Ok(Mode::Joint),
            "graph" => Ok(Mode::Graph),
            "dense" => Ok(Mode::Dense),
            "lexical" | "bm25" => Ok(Mode::Lexical),
            other => Err(crate::error::Error::invalid_field(
                crate::error::Field::SearchMode,
                format!("unknown mode `{other}` (expected joint, graph, dense or lexical)"),
            )),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Joint => "joint",
            Mode::Graph => "graph",
            Mode::Dense => "dense",
            Mode::Lexical => "lexical",
        })
    }
}

/// Fusion weights and thresholds. Defaults were tuned on the dev datasets
/// with `toolgraph eval` (see README, "Ranking").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankConfig {
    /// Weight of the graph channel (evidence coverage in [-1, 1]).
    pub w_graph: f32,
    /// Weight of the dense channel (raw cosine).
    pub w_dense: f32,
    /// Weight of the lexical channel (BM25 / best BM25 of the request),
    /// scaled by the request's lexical trust (see `lexical_trust_k`).
    pub w_lexical: f32,
    /// Lexical trust = (best BM25 / (best BM25 + k))^power: a request that
    /// shares many rare words with some tool (long, specific requests)
    /// leans on BM25; a vague one leans on the embeddings.
    pub lexical_trust_k: f32,
    pub lexical_trust_power: f32,
    /// Bonus when the tool performs the verb the planner stated in its
    /// `verb` field (stated intent outranks similar-sounding tools).
    pub w_stated_verb: f32,
    /// Contenders: candidates whose fused score is within this of the top.
    pub ambiguity_margin: f32,
    /// Abstain when the top match's confidence is below this.
    pub abstain_below: f32,
    /// `resolve` substitutes when confidence clears this.
    pub substitute_above: f32,
    /// Index parameter names for BM25 besides name and description
    /// (off reproduces the name + description BM25 references).
    #[serde(default = "yes")]
    pub lexical_params: bool,
    /// Rank each step of a multi-step request on its own as well.
    #[serde(default = "yes")]
    pub steps: bool,
    /// The exact-name guarantee (off reproduces plain BM25 references).
    #[serde(default = "yes")]
    pub exact_names: bool,
    /// A step's score must beat the whole request's by this much to count
    /// (a fragment of a one-intent request should not outvote the whole).
    #[serde(default)]
    pub step_discount: f32,
    /// A multi-step request lists each step's best tool right after the top
    /// match, so every step is covered before any step's runner-up.
    #[serde(default = "yes")]
    pub step_cover: bool,
    /// Inferred dependencies at or above this confidence are followed when
    /// a request asks for prerequisites (declared ones always are).
    #[serde(default = "infer_threshold")]
    pub infer_threshold: f32,
    /// Below this many vectors the dense channel scans every tool's int8
    /// codes, and its answers are exact. From it on, a first pass over
    /// sign bits picks `dense_first_pass` tools in scope for that scan,
    /// and the answers are approximate (recall@10 against the exact scan
    /// is in `benches/results/perf.json`).
    #[serde(default = "dense_scan_all_below")]
    pub dense_scan_all_below: usize,
    /// Tools the first pass picks (see `dense_scan_all_below`; at least
    /// one more than the 256 the dense channel shortlists).
    #[serde(default = "dense_first_pass")]
    pub dense_first_pass: usize,
    /// The graph channel's walk leaves out adjacency lists of at least
    /// this many links (a popular entity's, in a large catalog): the tools
    /// only they reach are bounded rather than scored, and scored exactly
    /// when fusion looks at them. The answers are the same.
    #[serde(default = "graph_defer_from")]
    pub graph_defer_from: usize,
}

fn graph_defer_from() -> usize {
    2_048
}

fn infer_threshold() -> f32 {
    crate::catalog::deps::INFER_THRESHOLD
}

fn dense_scan_all_below() -> usize {
    32_768
}

fn dense_first_pass() -> usize {
    4_096
}

fn yes() -> bool {
    true
}

impl Default for RankConfig {
    fn default() -> Self {
        Self {
            w_graph: 0.1,
            w_dense: 1.0,
            w_lexical: 1.0,
            lexical_trust_k: 10.0,
            lexical_trust_power: 3.0,
            w_stated_verb: 0.15,
            ambiguity_margin: 0.06,
            abstain_below: 0.15,
            substitute_above: 0.6,
            lexical_params: true,
            steps: true,
            exact_names: true,
            step_discount: 0.06,
            step_cover: true,
            infer_threshold: infer_threshold(),
            dense_scan_all_below: dense_scan_all_below(),
            dense_first_pass: dense_first_pass(),
            graph_defer_from: graph_defer_from(),
        }
    }
}

/// One graph path that contributed to a tool's graph score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GraphPath {
    /// The request text that produced the node.
    pub mention: String,
    /// The request node (verb, entity or instance IRI).
    pub node: String,
    /// The tool-side node it reached.
    pub via: String,
    pub relation: Relation,
    pub hops: u8,
    /// Contribution to the graph score (negative for sibling evidence).
    pub weight: f32,
    /// `extracted` when the tool-side link was derived, `curated` otherwise.
    pub provenance: crate::model::Provenance,
    /// Human-readable: `"Southwest" -> Southwest -[instanceOf]-> airline <-[actsOn]- tool`.
    pub explain: String,
    /// The mention came from the planner's `verb` field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stated: bool,
    /// The mention came from the conversation's earlier turns (`context`
    /// or the session's), not from the request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_context: bool,
}

/// Why a tool scored what it scored. Every match carries one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ScoreDetails {
    /// Graph evidence coverage: share of the request's verb/entity evidence
    /// the tool's constellation explains, minus sibling conflicts.
    pub graph: f32,
    /// Cosine between the request and the tool embedding.
    pub dense: f32,
    /// BM25 divided by the best BM25 for this request.
    pub lexical: f32,
    /// Raw BM25 score.
    pub bm25: f32,
    /// How much the lexical channel is trusted for this request, in [0, 1]
    /// (from the request's best BM25); joint adds `w_lexical * lexical_trust * lexical`.
    #[serde(default)]
    pub lexical_trust: f32,
    /// The request names this tool (exact-name guarantee).
    pub exact_name: bool,
    /// The fused score the order is based on.
    pub fused: f32,
    /// Labels of the request terms the graph matched.
    pub matched: Vec<String>,
    /// Graph paths behind `graph`.
    pub paths: Vec<GraphPath>,
    /// Set when disambiguation moved or kept this tool on top, naming the facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The step of a multi-step request this score comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Set when this is the best tool for a step of a multi-step request
    /// (naming the step): it is listed right after the top match, ahead of
    /// higher-scoring runners-up of other steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_for_step: Option<String>,
    /// Set when this tool is listed because a match above it needs it
    /// (a request with `dependencies: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prerequisite_of: Option<PrerequisiteOf>,
    /// Under a goal that favours this tool's operation or entity (design
    /// 000's context boosts): `fused` is the boosted score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_boost: Option<GoalBoost>,
    /// In a conversation, a follow-up that names no verb ("what about
    /// Paris?"): the tool the conversation called last, boosted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_boost: Option<GoalBoost>,
}

/// A boost of one tool (a goal's, or the conversation's last tool): the
/// factor its fused score was multiplied by, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GoalBoost {
    pub factor: f32,
    pub reason: String,
}

/// Why a prerequisite is listed: the tool that needs it and the edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PrerequisiteOf {
    /// The tool that needs this one directly.
    pub tool: String,
    /// `curated` for a declared dependency, `extracted` for an inferred one.
    pub provenance: crate::model::Provenance,
    /// The edge's confidence (1 for declared edges).
    pub confidence: f32,
    /// Edges from the match it was listed for (1: a direct prerequisite).
    pub depth: usize,
    /// The dependency's kind, the parameter of `tool` this one provides,
    /// and why.
    #[serde(flatten)]
    pub facts: crate::model::DependencyFacts,
    /// Human-readable: `runs before share_location (declared, parameter location)`.
    pub explain: String,
}

/// With `dependencies`: what to run before a match, as a small plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Plan {
    /// The prerequisites in running order (each after the ones it needs).
    pub steps: Vec<PlanStep>,
    /// Prerequisites left out because the request gives what they make.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supplied: Vec<SuppliedParameter>,
}

impl Plan {
    /// Nothing to run before and nothing left out.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.supplied.is_empty()
    }
}

/// One step of a [`Plan`]: run `tool`, feed its output to `feeds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlanStep {
    pub tool: String,
    /// The tool that needs it (the match or an earlier step's consumer).
    pub feeds: String,
    /// The parameter of `feeds` it produces, when the edge says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// Other tools that produce the same parameter, which the request
    /// supports less (call one instead if it fits better).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
}

/// A prerequisite not needed: the request gives the parameter it makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SuppliedParameter {
    /// The prerequisite left out.
    pub tool: String,
    pub feeds: String,
    pub parameter: String,
    /// What in the request gives it (`jane@example.com`).
    pub value: String,
}

/// A scored tool before confidence and disambiguation.
#[derive(Debug, Clone)]
pub(crate) struct Scored {
    pub idx: usize,
    pub details: ScoreDetails,
}

/// One ranked tool: what the pipeline answers.
#[derive(Debug, Clone)]
pub(crate) struct RankedTool {
    pub idx: usize,
    pub details: ScoreDetails,
    /// Calibrated probability that this is a right tool.
    pub confidence: f32,
    /// With `dependencies`: the tools to run before it, in running order
    /// (each after the ones it needs), within the scope.
    pub prerequisites: Vec<usize>,
    /// With `dependencies`: the same as a plan, and what the request
    /// makes unnecessary.
    pub plan: Option<Plan>,
}

impl Mode {
    /// Whether the graph channel ranks in this mode.
    pub fn uses_graph(self) -> bool {
        matches!(self, Mode::Joint | Mode::Graph)
    }
    /// Whether the dense channel ranks in this mode.
    pub fn uses_dense(self) -> bool {
        matches!(self, Mode::Joint | Mode::Dense)
    }
    /// Whether the lexical channel ranks in this mode.
    pub fn uses_lexical(self) -> bool {
        matches!(self, Mode::Joint | Mode::Lexical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_parses_and_prints() {
        for m in [Mode::Joint, Mode::Graph, Mode::Dense, Mode::Lexical] {
            assert_eq!(m.to_string().parse::<Mode>().unwrap(), m);
        }
        assert!("vector".parse::<Mode>().is_err());
    }
}
