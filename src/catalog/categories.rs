//! Categories for tools that declare none (imported, registered or
//! admitted through the airlock), inferred from the curated ones: a
//! category a profile or a goal names is only useful if new tools can land
//! in it.
//!
//! A tool without a category takes the category of the curated tools that
//! look most like it: each curated tool sharing one of its entities (weight
//! ≥ 0.5) gives its categories 2 votes, 1 more when it shares the verb too,
//! and each sharing a verb in a shared domain 2; the category with the most
//! votes wins (ties: the first IRI). A verb alone says too little ("get"):
//! it does not vote. Nothing is inferred where nothing is alike: such a
//! tool is seen by profiles that name it or every tool (`admin`). Inferred
//! links are `extracted`, weighted by the winner's share of the votes, and
//! said as inferred wherever a policy explains itself. The votes are summed
//! per entity, (entity, verb) and (verb, domain) once per catalog, so a
//! tool costs a few lookups (snapshots are rebuilt on every write).

use crate::model::{Link, Provenance, Tool};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Votes per category index.
type Votes = HashMap<usize, u32>;

fn add(into: &mut Votes, from: Option<&Votes>, times: u32) {
    for (&c, &n) in from.into_iter().flatten() {
        *into.entry(c).or_default() += n * times;
    }
}

/// Fills in the categories of the tools that have none.
pub(super) fn infer(tools: &mut [Tool]) {
    let curated = |t: &Tool| {
        t.categories
            .iter()
            .any(|c| c.provenance == Provenance::Curated)
    };
    if !tools.iter().any(curated) || tools.iter().all(|t| !t.categories.is_empty()) {
        return;
    }
    // The categories, by index, with their labels.
    let mut cats: Vec<(Arc<str>, Arc<str>)> = Vec::new();
    let mut cat_of: HashMap<Arc<str>, usize> = HashMap::default();
    let mut by_entity: HashMap<&str, Votes> = HashMap::default();
    let mut by_entity_verb: HashMap<(&str, &str), Votes> = HashMap::default();
    let mut by_verb_domain: HashMap<(&str, &str), Votes> = HashMap::default();
    for t in tools.iter().filter(|t| curated(t)) {
        let mine: Vec<usize> = t
            .categories
            .iter()
            .map(|c| {
                *cat_of.entry(c.iri.clone()).or_insert_with(|| {
                    cats.push((c.iri.clone(), c.label.clone()));
                    cats.len() - 1
                })
            })
            .collect();
        let bump = |votes: &mut Votes| {
            for &c in &mine {
                *votes.entry(c).or_default() += 1;
            }
        };
        for e in strong(t) {
            bump(by_entity.entry(e).or_default());
            for v in &t.verbs {
                bump(by_entity_verb.entry((e, &v.iri)).or_default());
            }
        }
        for v in &t.verbs {
            for d in &t.domains {
                bump(by_verb_domain.entry((&v.iri, &d.iri)).or_default());
            }
        }
    }
    let mut inferred: Vec<(usize, Link)> = Vec::new();
    for (i, t) in tools
        .iter()
        .enumerate()
        .filter(|(_, t)| t.categories.is_empty())
    {
        let mut votes = Votes::default();
        for e in strong(t) {
            add(&mut votes, by_entity.get(e), 2);
            for v in &t.verbs {
                add(&mut votes, by_entity_verb.get(&(e, &*v.iri)), 1);
            }
        }
        for v in &t.verbs {
            for d in &t.domains {
                add(&mut votes, by_verb_domain.get(&(&*v.iri, &*d.iri)), 2);
            }
        }
        let total: u32 = votes.values().sum();
        let best = votes
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(cats[*b.0].0.cmp(&cats[*a.0].0)));
        if let Some((&c, &n)) = best {
            inferred.push((
                i,
                Link {
                    iri: cats[c].0.clone(),
                    label: cats[c].1.clone(),
                    provenance: Provenance::Extracted,
                    weight: n as f32 / total.max(1) as f32,
                },
            ));
        }
    }
    for (i, link) in inferred {
        // The tool had none: one link, no room for four (a first push's).
        tools[i].categories = vec![link];
    }
}

/// A tool's entities that count (weight ≥ 0.5), each once.
fn strong(t: &Tool) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for e in t.entities.iter().filter(|e| e.weight >= 0.5) {
        if !out.contains(&&*e.iri) {
            out.push(&e.iri);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(iri: &str, provenance: Provenance, weight: f32) -> Link {
        Link {
            iri: iri.into(),
            label: iri.rsplit('/').next().unwrap_or(iri).into(),
            provenance,
            weight,
        }
    }

    fn tool(name: &str, verb: &str, entity: &str, domain: &str, category: Option<&str>) -> Tool {
        Tool {
            name: name.into(),
            verbs: vec![link(verb, Provenance::Curated, 1.0)],
            entities: vec![link(entity, Provenance::Extracted, 0.8)],
            domains: vec![link(domain, Provenance::Curated, 1.0)],
            categories: category
                .map(|c| vec![link(c, Provenance::Curated, 1.0)])
                .unwrap_or_default(),
            ..Tool::default()
        }
    }

    #[test]
    fn an_uncategorized_tool_takes_the_category_of_the_tools_it_resembles() {
        let mut tools = vec![
            tool(
                "flight_book",
                "v/reserve",
                "e/Flight",
                "d/travel",
                Some("c/booking"),
            ),
            tool(
                "flight_status",
                "v/get",
                "e/Flight",
                "d/travel",
                Some("c/information"),
            ),
            tool(
                "hotel_book",
                "v/reserve",
                "e/Hotel",
                "d/travel",
                Some("c/booking"),
            ),
            tool("todo_add", "v/create", "e/Task", "d/tasks", Some("c/tasks")),
            // imported: reserve a flight (same entity, same verb as flight_book)
            tool("air_reserve", "v/reserve", "e/Flight", "d/x", None),
            // imported: nothing alike at all
            tool("weather_now", "v/forecast", "e/Weather", "d/weather", None),
        ];
        infer(&mut tools);
        let air = &tools[4].categories;
        assert_eq!(air.len(), 1);
        assert_eq!(&*air[0].iri, "c/booking");
        assert_eq!(air[0].provenance, Provenance::Extracted);
        assert!(air[0].weight > 0.5 && air[0].weight <= 1.0, "{air:?}");
        assert!(
            tools[5].categories.is_empty(),
            "nothing alike, nothing inferred"
        );
        // curated categories are never touched
        assert_eq!(tools[1].categories.len(), 1);
    }
}
