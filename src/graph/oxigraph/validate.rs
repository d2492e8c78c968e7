//! The seed constraints (`queries/validate/*.rq`): one violation query
//! each, run inside a transaction (a checked load) or on the store as it
//! is, the rules then on every core.

use super::OxigraphStore;
use super::sparql::{Rows, collect_rows, parse_fixed, prepared, sparql_err};
use crate::error::Result;
use crate::model::Violation;
use oxigraph::store::Transaction;

/// The seed constraints, one violation query each (`queries/validate/*.rq`).
const VALIDATION_RULES: &[(&str, &str)] = &[
    (
        "tool_without_verb",
        include_str!("../../../queries/validate/tool_without_verb.rq"),
    ),
    (
        "tool_without_name",
        include_str!("../../../queries/validate/tool_without_name.rq"),
    ),
    (
        "tool_without_description",
        include_str!("../../../queries/validate/tool_without_description.rq"),
    ),
    (
        "undefined_verb",
        include_str!("../../../queries/validate/undefined_verb.rq"),
    ),
    (
        "undefined_entity",
        include_str!("../../../queries/validate/undefined_entity.rq"),
    ),
    (
        "undefined_dependency",
        include_str!("../../../queries/validate/undefined_dependency.rq"),
    ),
    (
        "dependency_cycle",
        include_str!("../../../queries/validate/dependency_cycle.rq"),
    ),
    (
        "duplicate_tool_name",
        include_str!("../../../queries/validate/duplicate_tool_name.rq"),
    ),
    (
        "label_missing",
        include_str!("../../../queries/validate/label_missing.rq"),
    ),
    (
        "broader_cycle",
        include_str!("../../../queries/validate/broader_cycle.rq"),
    ),
    (
        "instance_without_class",
        include_str!("../../../queries/validate/instance_without_class.rq"),
    ),
    (
        "undefined_profile_tool",
        include_str!("../../../queries/validate/undefined_profile_tool.rq"),
    ),
    (
        "undefined_policy_tool",
        include_str!("../../../queries/validate/undefined_policy_tool.rq"),
    ),
    (
        "undefined_policy_reference",
        include_str!("../../../queries/validate/undefined_policy_reference.rq"),
    ),
    (
        "agent_policy",
        include_str!("../../../queries/validate/agent_policy.rq"),
    ),
];

impl OxigraphStore {
    pub(super) fn violations_in(transaction: &Transaction<'_>) -> Result<Vec<Violation>> {
        let mut out = Vec::new();
        for (rule, text) in VALIDATION_RULES {
            let results = prepared(parse_fixed(text)?)
                .on_transaction(transaction)
                .execute()
                .map_err(sparql_err)?;
            out.extend(violations(rule, collect_rows(results)?));
        }
        Ok(sorted(out))
    }

    /// The violations of the store as it is, the rules on every core (they
    /// are independent reads: at 300k tools they took 78 s one after
    /// another, the slowest 32 s).
    pub(super) fn violations_now(&self) -> Result<Vec<Violation>> {
        use rayon::prelude::*;
        let per_rule = VALIDATION_RULES
            .par_iter()
            .map(|(rule, text)| Ok(violations(rule, self.select_fixed(text)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(sorted(per_rule.into_iter().flatten().collect()))
    }
}

/// A rule's rows as violations.
fn violations(rule: &str, rows: Rows) -> impl Iterator<Item = Violation> + use<'_> {
    rows.into_iter().map(move |row| Violation {
        rule: rule.to_string(),
        subject: row.get("subject").cloned().unwrap_or_default(),
        message: row.get("message").cloned().unwrap_or_default(),
        location: None,
    })
}

/// Violations in subject order, each once.
fn sorted(mut out: Vec<Violation>) -> Vec<Violation> {
    out.sort_by(|a, b| (&a.subject, &a.rule).cmp(&(&b.subject, &b.rule)));
    out.dedup();
    out
}
