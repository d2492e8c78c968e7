//! Categories for tools that declare none (imported, registered or
//! admitted through the airlock), inferred from the curated ones: a
//! category a profile or a goal names is only useful if new tools can land
//! in it.
//!
//! A tool without a category takes the category of the curated tools that
//! look most like it: each curated tool sharing one of its entities (weight
//! ≥ 0.5) scores 2, sharing a verb 1, a domain 1; a curated tool counts
//! only at 2 or more (the same entity, or the same verb in the same
//! domain), and the category with the highest total wins (ties: the first
//! IRI). Nothing is inferred where nothing is alike: such a tool is seen by
//! profiles that name it or every tool (`admin`), as before. Inferred links
//! are `extracted`, weighted by the winner's share of the votes, and said
//! as inferred wherever a policy explains itself.

use crate::model::{Link, Provenance, Tool};
use std::collections::{BTreeMap, HashMap};

/// Fills in the categories of the tools that have none.
pub(super) fn infer(tools: &mut [Tool]) {
    let curated: Vec<usize> = (0..tools.len())
        .filter(|&i| {
            tools[i]
                .categories
                .iter()
                .any(|c| c.provenance == Provenance::Curated)
        })
        .collect();
    if curated.is_empty() || curated.len() == tools.len() {
        return;
    }
    let mut by_entity: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_verb: HashMap<&str, Vec<usize>> = HashMap::new();
    for &u in &curated {
        for e in tools[u].entities.iter().filter(|e| e.weight >= 0.5) {
            by_entity.entry(e.iri.as_str()).or_default().push(u);
        }
        for v in &tools[u].verbs {
            by_verb.entry(v.iri.as_str()).or_default().push(u);
        }
    }
    let mut inferred: Vec<(usize, Link)> = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        if !t.categories.is_empty() {
            continue;
        }
        let mut alike: HashMap<usize, u32> = HashMap::new();
        for e in t.entities.iter().filter(|e| e.weight >= 0.5) {
            for &u in by_entity.get(e.iri.as_str()).into_iter().flatten() {
                *alike.entry(u).or_default() = 2;
            }
        }
        for v in &t.verbs {
            for &u in by_verb.get(v.iri.as_str()).into_iter().flatten() {
                let domain = tools[u]
                    .domains
                    .iter()
                    .any(|d| t.domains.iter().any(|x| x.iri == d.iri));
                let s = alike.entry(u).or_default();
                *s += 1 + u32::from(domain);
            }
        }
        let mut votes: BTreeMap<&str, (u32, &str)> = BTreeMap::new();
        let mut total = 0;
        for (&u, &score) in &alike {
            if score < 2 {
                continue;
            }
            for c in &tools[u].categories {
                let e = votes.entry(c.iri.as_str()).or_insert((0, c.label.as_str()));
                e.0 += score;
                total += score;
            }
        }
        let best = votes
            .iter()
            .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.0.cmp(a.0)))
            .map(|(iri, (n, label))| (iri.to_string(), label.to_string(), *n));
        if let Some((iri, label, n)) = best {
            inferred.push((
                i,
                Link {
                    iri,
                    label,
                    provenance: Provenance::Extracted,
                    weight: n as f32 / total.max(1) as f32,
                },
            ));
        }
    }
    for (i, link) in inferred {
        tools[i].categories.push(link);
    }
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
        assert_eq!(air[0].iri, "c/booking");
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
