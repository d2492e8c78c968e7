//! Goal boundaries: a goal keeps the tools whose verb is among its
//! operations (through `skos:broader`) and not among its excluded ones, and
//! that act on one of its entities (or a narrower one) or sit in one of its
//! categories, plus the tools it names itself (unless their verb is excluded:
//! deny wins). Between an allowed and an excluded operation the nearer one
//! decides (a goal may allow `cancel` while excluding the broader `delete`);
//! at the same distance the exclusion wins.

use super::data::Goal;
use crate::catalog::Catalog;
use crate::vocab;

/// How many `skos:broader` hops a verb or entity may climb to meet a goal.
const HOPS: usize = 4;

/// `Ok(why it is inside)` or `Err(why it is outside)` for one tool.
pub(super) fn verdict(catalog: &Catalog, goal: &Goal, idx: usize) -> Result<String, String> {
    let tool = &catalog.tools()[idx];
    let name = vocab::local_name(&goal.iri);
    // Hops from a node up to the nearest of `targets`.
    let distance = |iri: &str, targets: &[String]| {
        catalog
            .ancestors(iri, HOPS)
            .iter()
            .filter(|(a, _)| targets.contains(a))
            .map(|(_, hops)| *hops)
            .min()
    };
    let excluded = |iri: &str| match (
        distance(iri, &goal.excluded),
        distance(iri, &goal.operations),
    ) {
        (Some(e), Some(a)) => e <= a,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if let Some(v) = tool.verbs.iter().find(|v| excluded(&v.iri)) {
        return Err(format!("its verb {} is excluded by goal {name}", v.label));
    }
    if goal.tools.contains(&tool.iri) {
        return Ok(format!("goal {name} lists it"));
    }
    let reaches = |iri: &str, targets: &[String]| distance(iri, targets).is_some();
    let Some(verb) = tool
        .verbs
        .iter()
        .find(|v| reaches(&v.iri, &goal.operations))
    else {
        let verbs: Vec<&str> = tool.verbs.iter().map(|v| v.label.as_str()).collect();
        return Err(format!(
            "its verb ({}) is not among goal {name}'s operations",
            if verbs.is_empty() {
                "none".to_string()
            } else {
                verbs.join(", ")
            }
        ));
    };
    let entity = tool
        .entities
        .iter()
        .filter(|e| e.weight >= 0.5)
        .find(|e| reaches(&e.iri, &goal.entities));
    let category = tool
        .categories
        .iter()
        .find(|c| goal.categories.contains(&c.iri));
    match (entity, category) {
        (Some(e), _) => Ok(format!(
            "{} on {} is within goal {name}",
            verb.label, e.label
        )),
        (None, Some(c)) => Ok(format!(
            "{} in category {} is within goal {name}",
            verb.label, c.label
        )),
        (None, None) => Err(format!(
            "it acts on nothing within goal {name}'s entities or categories"
        )),
    }
}
