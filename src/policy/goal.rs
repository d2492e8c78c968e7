//! Goal boundaries (design 000): a goal keeps the tools whose verb is among
//! its operations (or narrower, through `skos:broader`) and not among its
//! excluded ones, AND that act on one of its entities (or a narrower one),
//! AND that sit in one of its categories; a dimension the goal does not
//! declare does not restrict. Between an allowed and an excluded operation
//! the nearer one decides (a goal may allow `cancel` while excluding the
//! broader `delete`); at the same distance the exclusion wins. The tools a
//! goal lists (`tg:availableTool`) are a check list, not a widening: one
//! outside the boundary is removed and said in a warning.

use super::data::Goal;
use super::reason::{Reason, Verdict};
use crate::catalog::Catalog;
use crate::vocab;

/// How many `skos:broader` hops a verb or entity may climb to meet a goal:
/// `reschedule` meets `update`, `Technician` meets `Employee`; four hops
/// took `FoodOrder` up to what a booking goal names.
const HOPS: usize = 2;

/// The nearest of `targets` a node reaches climbing `skos:broader` (itself
/// included), with the hops it took.
fn nearest<'t>(catalog: &Catalog, iri: &str, targets: &'t [String]) -> Option<(&'t str, usize)> {
    catalog
        .ancestors(iri, HOPS)
        .iter()
        .filter_map(|(a, hops)| {
            targets
                .iter()
                .find(|t| *t == a)
                .map(|t| (t.as_str(), *hops))
        })
        .min_by_key(|(_, hops)| *hops)
}

/// `Ok(why it is inside)` or `Err(why it is outside)` for one tool.
pub(super) fn verdict<'a>(catalog: &'a Catalog, goal: &'a Goal, idx: usize) -> Verdict<'a> {
    let tool = &catalog.tools()[idx];
    let name = goal.iri.as_str();
    let distance = |iri: &str, targets: &[String]| nearest(catalog, iri, targets).map(|n| n.1);
    let excluded = |iri: &str| match (
        distance(iri, &goal.excluded),
        distance(iri, &goal.operations),
    ) {
        (Some(e), Some(a)) => e <= a,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if let Some(v) = tool.verbs.iter().find(|v| excluded(&v.iri)) {
        return Err(Reason::VerbExcluded(&v.label, name));
    }
    let reaches = |iri: &str, targets: &[String]| distance(iri, targets).is_some();
    let Some(verb) = tool
        .verbs
        .iter()
        .find(|v| reaches(&v.iri, &goal.operations))
    else {
        return Err(Reason::VerbNotAmongOperations(&tool.verbs, name));
    };
    let entity = tool
        .entities
        .iter()
        .filter(|e| e.weight >= 0.5)
        .find(|e| reaches(&e.iri, &goal.entities));
    if !goal.entities.is_empty() && entity.is_none() {
        return Err(Reason::NoEntityWithin(name));
    }
    let category = tool
        .categories
        .iter()
        .find(|c| goal.categories.iter().any(|g| **g == *c.iri));
    if !goal.categories.is_empty() && category.is_none() {
        return Err(Reason::CategoryNotWithin(&tool.categories, name));
    }
    Ok(Reason::WithinGoal {
        verb: &verb.label,
        entity: entity.map(|e| &*e.label),
        category: category.map(|c| &*c.label),
        goal: name,
        listed: goal.tools.contains(&tool.iri),
    })
}

/// The design's context boosts: a tool performing an operation the goal
/// favours scores ×1.5, one acting on an entity it favours ×1.3 (both:
/// their product); `None` for the others.
pub(super) fn boost(catalog: &Catalog, goal: &Goal, idx: usize) -> Option<(f32, String)> {
    if goal.favoured_operations.is_empty() && goal.favoured_entities.is_empty() {
        return None;
    }
    let tool = &catalog.tools()[idx];
    let name = vocab::local_name(&goal.iri);
    // The favoured node a verb or entity reaches, said as "create" or
    // "create (schedule)" when a narrower one reached it.
    let reached = |iri: &str, label: &str, targets: &[String]| {
        nearest(catalog, iri, targets).map(|(a, _)| {
            let target = catalog.label(a);
            if target == label {
                target
            } else {
                format!("{target} ({label})")
            }
        })
    };
    let mut factor = 1.0;
    let mut why = Vec::new();
    if let Some(said) = tool
        .verbs
        .iter()
        .find_map(|v| reached(&v.iri, &v.label, &goal.favoured_operations))
    {
        factor *= OPERATION_BOOST;
        why.push(format!("{said}, ×{OPERATION_BOOST}"));
    }
    if let Some(said) = tool
        .entities
        .iter()
        .filter(|e| e.weight >= 0.5)
        .find_map(|e| reached(&e.iri, &e.label, &goal.favoured_entities))
    {
        factor *= ENTITY_BOOST;
        why.push(format!("{said}, ×{ENTITY_BOOST}"));
    }
    (factor > 1.0).then(|| (factor, format!("goal {name} favours {}", why.join(" and "))))
}

/// Design 000: "if current goal is EXECUTE_SOLUTION, create ×1.5".
const OPERATION_BOOST: f32 = 1.5;
/// Design 000: "customer data extracted: customer tools ×1.3".
const ENTITY_BOOST: f32 = 1.3;
