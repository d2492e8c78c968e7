//! The graph channel against a path-by-path reference, on synthetic and real catalogs.

use super::*;
use crate::engine::{Embeddings, Engine, EngineOptions, synthetic_engine};
use crate::import::{Format, bundled, collect_files};
use crate::rank::Mode;
use crate::rank::query::Query;
use std::collections::{BTreeMap, HashSet as StdSet};

/// (mention, node, via, relation, hops, extracted, weight, stated)
type ExpectedPath = (String, String, String, Relation, u8, bool, f32, bool);

/// A tool's graph score as the reference works it out.
#[derive(Debug, Default)]
struct Expected {
    score: f32,
    stated_verb: bool,
    matched: Vec<String>,
    paths: Vec<ExpectedPath>,
}

/// The graph channel worked out path by path over the paths as the
/// SPARQL query lists them (`Paths::candidates`, held to the query in
/// `catalog::paths`): per mention and tool, the strongest positive path
/// (the first listed of equal weights) and the strongest negative one
/// unless the surface has a positive path to the tool; a tool acting on
/// another instance than the one named (a rival) keeps only its negative.
fn reference(
    catalog: &Catalog,
    mentions: &[Mention],
    explicit: usize,
    scope: &Scope,
    ties: &mut usize,
) -> BTreeMap<usize, Expected> {
    let nodes: Vec<String> = mentions
        .iter()
        .flat_map(|m| m.iris.iter().map(|r| r.iri.clone()))
        .collect();
    let hits = catalog.paths().candidates(&nodes, scope);
    let mut out: BTreeMap<usize, Expected> = BTreeMap::new();
    let mut groups = StdSet::new();
    let mut marked: StdSet<(usize, String)> = StdSet::new();
    let mut total = 0.0_f32;
    for (i, m) in mentions.iter().enumerate() {
        let explicit_verb = i < explicit && m.kind == MentionKind::Verb;
        let w_m = mention_weight(m.kind)
            * if explicit_verb {
                EXPLICIT_VERB_WEIGHT
            } else {
                1.0
            };
        let mut key: Vec<&str> = m.iris.iter().map(|r| r.iri.as_str()).collect();
        key.sort();
        if w_m <= 0.0 || m.iris.is_empty() || !groups.insert(key) {
            continue;
        }
        total += w_m;
        // tool -> (strongest positive, strongest negative)
        let mut best: BTreeMap<usize, [Option<(f32, &crate::catalog::paths::Hit)>; 2]> =
            BTreeMap::new();
        let mut rivals: StdSet<usize> = StdSet::new();
        for r in &m.iris {
            for h in hits.iter().filter(|h| h.node == r.iri) {
                if h.relation == Relation::Rival {
                    rivals.insert(h.tool);
                }
                let rarity = match h.relation {
                    Relation::Verb | Relation::VerbBroader => 1.0,
                    _ => catalog.idf(h.via).sqrt(),
                };
                let w = w_m * r.weight.min(1.0) * relation_weight(h.relation, h.hops) * rarity;
                let slot = &mut best.entry(h.tool).or_default()[usize::from(w < 0.0)];
                match slot {
                    Some((b, kept)) if w.abs() <= b.abs() => {
                        *ties += usize::from(w.abs() == b.abs() && *kept != h);
                    }
                    _ => *slot = Some((w, h)),
                }
            }
        }
        for (tool, [positive, negative]) in best {
            for (is_positive, found) in [(true, positive), (false, negative)] {
                let Some((w, h)) = found else { continue };
                let rival = rivals.contains(&tool);
                if is_positive && rival {
                    continue;
                }
                let pair = (tool, m.surface.clone());
                if is_positive {
                    marked.insert(pair);
                } else if !rival && marked.contains(&pair) {
                    continue;
                }
                let e = out.entry(tool).or_default();
                e.score += w;
                e.stated_verb |= is_positive && i < explicit && h.relation == Relation::Verb;
                if is_positive {
                    e.matched.push(m.surface.clone());
                }
                e.paths.push((
                    m.surface.clone(),
                    h.node.to_string(),
                    h.via.to_string(),
                    h.relation,
                    h.hops,
                    h.extracted,
                    w,
                    i < explicit,
                ));
            }
        }
    }
    for e in out.values_mut() {
        if total > 0.0 {
            e.score /= total;
        }
        e.paths.sort_by(|a, b| b.6.total_cmp(&a.6));
    }
    out
}

/// Compares the streaming channel with the reference for `requests`
/// (text, stated verb) over the whole catalog and a restricted scope;
/// counts the tools compared, their negative paths, and the equal-weight
/// paths the reference chose between.
///
/// With `defer_from`, runs that long are left out of the walk: every
/// tool's score is then asked for on demand, and the walk's listed scores
/// plus [`GraphScores::unlisted`] must bound them.
fn compare(
    catalog: &Catalog,
    requests: &[(String, Option<&str>)],
    defer_from: usize,
) -> [usize; 3] {
    let n = catalog.tools().len();
    let scopes = [Scope::all(n), Scope::of(n, (0..n).filter(|i| i % 3 != 1))];
    let [mut reached, mut negative, mut ties] = [0; 3];
    for (text, verb) in requests {
        let query = Query::parse(
            catalog,
            &Scope::all(catalog.len()),
            text,
            *verb,
            Mode::Joint,
            false,
        );
        let explicit = query.verb_mentions.len();
        for scope in &scopes {
            let got = graph_scores(
                catalog,
                &query.all_mentions,
                Sources::request(explicit),
                scope,
                defer_from,
            );
            let want = reference(catalog, &query.all_mentions, explicit, scope, &mut ties);
            let mut tools: Vec<usize> = got.tools().collect();
            tools.sort_unstable();
            match got.unlisted() {
                None => assert_eq!(tools, want.keys().copied().collect::<Vec<_>>(), "{text}"),
                Some((unlisted, stated)) => {
                    // The listed scores are of positive paths alone, and
                    // with what the runs left out may add they bound the
                    // exact ones.
                    assert!(tools.iter().all(|t| want.contains_key(t)), "{text}");
                    for (&idx, e) in &want {
                        let listed = got.scored().find(|(t, _)| *t == idx).map(|(_, r)| *r);
                        let (score, listed_verb, more) = listed
                            .map_or((0.0, false, unlisted), |r| (r.score, r.stated_verb, r.more));
                        assert!(more <= unlisted, "{text} {idx}");
                        assert!(score >= 0.0 && e.score <= score + more, "{text} {idx}");
                        assert!(!e.stated_verb || listed_verb || stated, "{text} {idx}");
                        // Fusion's bound without a replay says the same.
                        let upper = got.upper(idx).expect("a bound");
                        assert_eq!(upper.0.to_bits(), (score + more).to_bits(), "{text} {idx}");
                        assert_eq!(upper.1, listed_verb || stated, "{text} {idx}");
                    }
                }
            }
            for (&idx, e) in &want {
                let g = got.get(idx).expect("reached");
                assert_eq!(g.score.to_bits(), e.score.to_bits(), "{text} {idx}");
                // Once worked out, the bound is the score.
                let upper = got.upper(idx).map(|(s, v)| (s.to_bits(), v));
                assert_eq!(
                    upper,
                    Some((e.score.to_bits(), e.stated_verb)),
                    "{text} {idx}"
                );
                assert_eq!(g.stated_verb, e.stated_verb, "{text} {idx}");
                assert_eq!(got.matched(idx), e.matched, "{text} {idx}");
                let paths: Vec<_> = got
                    .paths(idx)
                    .into_iter()
                    .map(|p| {
                        let extracted = p.provenance == Provenance::Extracted;
                        let (m, node, via, rel, hops) =
                            (p.mention, p.node, p.via, p.relation, p.hops);
                        (m, node, via, rel, hops, extracted, p.weight, p.stated)
                    })
                    .collect();
                assert_eq!(paths, e.paths, "{text} {idx}");
                negative += e.paths.iter().filter(|p| p.6 < 0.0).count();
            }
            assert!(
                (0..n)
                    .filter(|i| !want.contains_key(i))
                    .all(|i| got.get(i).is_none())
            );
            reached += want.len();
        }
    }
    [reached, negative, ties]
}

/// The streaming channel answers what the path-by-path reference
/// answers: the same tools, bit-equal scores, the stated-verb flag,
/// matched surfaces and paths in order, over the whole catalog and a
/// restricted scope, with and without a stated verb. On a synthetic
/// catalog, and on the seeds with MetaTool's imported tools (extracted
/// links beside curated ones: paths of equal weight to choose between)
/// and its queries. With every run left out of the walk, and with the
/// long ones: the same scores, on demand.
#[test]
fn the_streaming_channel_equals_the_path_by_path_reference() {
    let (engine, synth) = synthetic_engine(1_200, 80, 11);
    let mut requests: Vec<(String, Option<&str>)> = synth
        .queries
        .iter()
        .filter_map(|q| q["query"].as_str().map(|t| (t.to_string(), None)))
        .collect();
    requests.push((
        "book a flight to Paris and reserve a hotel room".into(),
        Some("book"),
    ));
    requests.push((
        "send an email about the invoice to the team".into(),
        Some("send"),
    ));
    let catalog = &engine.snapshot().catalog;
    for defer_from in [usize::MAX, 0, 40] {
        let [reached, negative, _] = compare(catalog, &requests, defer_from);
        assert!(
            reached > 10_000 && negative > 100,
            "{reached} tools, {negative} negative"
        );
    }

    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    let turtle = collect_files(&[bundled("ontology"), bundled("seeds")]).unwrap();
    engine.load_paths(&turtle, None).unwrap();
    let metatool = bundled("benches/datasets/metatool");
    engine
        .load_paths(&[metatool.join("tools.jsonl")], Some(Format::Jsonl))
        .unwrap();
    let queries = std::fs::read_to_string(metatool.join("queries.jsonl")).unwrap();
    let mut requests: Vec<(String, Option<&str>)> = queries
        .lines()
        .step_by(7)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|q| q["query"].as_str().map(|t| (t.to_string(), None)))
        .collect();
    requests.push((
        "Southwest flight 175 tomorrow".into(),
        Some("MAKE_RESERVATION"),
    ));
    requests.push(("dinner for two at 8pm".into(), Some("MAKE_RESERVATION")));
    let catalog = &engine.snapshot().catalog;
    for defer_from in [usize::MAX, 0, 8] {
        let [reached, negative, ties] = compare(catalog, &requests, defer_from);
        assert!(
            reached > 1_000 && negative > 0 && ties > 0,
            "{reached} {negative} {ties}"
        );
    }
}

#[test]
fn matched_surfaces_are_kept_per_tool_in_bits_and_past_them_in_a_set() {
    let mut m = Matched::default();
    let (mut a, mut b) = (ToolGraph::default(), ToolGraph::default());
    for s in [0, 31, 32, 100] {
        assert!(!m.has(&a, 1, s));
        m.mark(&mut a, 1, s);
        assert!(m.has(&a, 1, s), "surface {s}");
        assert!(!m.has(&b, 2, s), "surface {s} of another tool");
    }
    assert!(!m.has(&a, 1, 1) && !m.has(&a, 1, 33));
    m.mark(&mut b, 2, 33);
    assert!(m.has(&b, 2, 33) && !m.has(&a, 1, 33));
    assert_eq!(a.surfaces, 1 | 1 << 31);
}

#[test]
fn relation_weights_discount_hops_and_penalise_siblings() {
    assert!(relation_weight(Relation::ActsOn, 0) > relation_weight(Relation::ActsOnBroader, 1));
    assert!(
        relation_weight(Relation::ActsOnBroader, 1) > relation_weight(Relation::ActsOnBroader, 2)
    );
    assert!(relation_weight(Relation::Sibling, 1) < 0.0);
}
