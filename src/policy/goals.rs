//! Goals as a flow (design 000): listing them in order with their
//! boundary, agents and next goals, and the next-goal hint a selection
//! carries.

use super::data::Goal;
use super::{Policy, Warning};
use crate::vocab;
use serde::{Deserialize, Serialize};

/// A goal as a caller sees it (`GET /v1/goals`, `toolgraph goals`): its
/// boundary, its place in the flow, its agents, and what it holds for this
/// caller. The tools it lists are named only where the caller may see them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GoalInfo {
    /// Local name (`BOOK_APPOINTMENT`).
    pub goal: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<i64>,
    /// The goals that may follow it.
    pub next: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_agent: Option<String>,
    /// The boundary (local names): a tool must fit each declared dimension.
    pub operations: Vec<String>,
    pub excluded_operations: Vec<String>,
    pub entities: Vec<String>,
    pub categories: Vec<String>,
    /// Operations and entities that rank higher under it.
    pub favours: Vec<String>,
    /// Its check list: the listed tools this caller has under the goal.
    pub available_tools: Vec<String>,
    /// How many tools this caller has under the goal.
    pub tools: usize,
    /// Listed tools this caller lacks under the goal, said as search does.
    pub warnings: Vec<Warning>,
}

/// The hint a selection under a goal carries: where the flow goes next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GoalHint {
    pub goal: String,
    pub next: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_agent: Option<String>,
    /// What to do when the goal is reached.
    pub hint: String,
}

impl Policy {
    /// The goals, in flow order (then name): the static parts of
    /// [`GoalInfo`] and each goal's IRI (the caller's parts are the
    /// engine's: it resolves the caller under each goal).
    pub fn goals(&self) -> Vec<(String, GoalInfo)> {
        let names = |v: &[String]| -> Vec<String> {
            v.iter().map(|i| vocab::local_name(i).to_string()).collect()
        };
        let mut out: Vec<(String, GoalInfo)> = self
            .data
            .goals
            .values()
            .map(|g| {
                (
                    g.iri.clone(),
                    GoalInfo {
                        goal: vocab::local_name(&g.iri).to_string(),
                        label: self.data.label(&g.iri).to_string(),
                        description: g.comment.clone(),
                        order: g.order,
                        next: names(&g.next),
                        primary_agent: g.primary_agent.clone(),
                        fallback_agent: g.fallback_agent.clone(),
                        operations: names(&g.operations),
                        excluded_operations: names(&g.excluded),
                        entities: names(&g.entities),
                        categories: names(&g.categories),
                        favours: names(&g.favoured_operations)
                            .into_iter()
                            .chain(names(&g.favoured_entities))
                            .collect(),
                        available_tools: Vec::new(),
                        tools: 0,
                        warnings: Vec::new(),
                    },
                )
            })
            .collect();
        out.sort_by(|a, b| {
            (a.1.order.unwrap_or(i64::MAX), &a.1.goal)
                .cmp(&(b.1.order.unwrap_or(i64::MAX), &b.1.goal))
        });
        out
    }

    /// A goal named by IRI, local name or label.
    pub(crate) fn goal_named(&self, name: &str) -> Option<&Goal> {
        self.find(&self.data.goals, name)
    }

    /// The next-goal hint for a caller's goal (named by IRI, local name or
    /// label); none without a goal.
    pub fn goal_hint(&self, goal: Option<&str>) -> Option<GoalHint> {
        let g = self.goal_named(goal?)?;
        let next: Vec<String> = g
            .next
            .iter()
            .map(|n| vocab::local_name(n).to_string())
            .collect();
        let name = vocab::local_name(&g.iri).to_string();
        let hint = if next.is_empty() {
            format!("{name} ends the flow: when it is reached, the conversation is done")
        } else {
            format!(
                "when {name} is reached, continue with {}",
                next.join(" or ")
            )
        };
        Some(GoalHint {
            goal: name,
            next,
            primary_agent: g.primary_agent.clone(),
            fallback_agent: g.fallback_agent.clone(),
            hint,
        })
    }
}
