//! Synthetic catalogs for performance work: N tools drawn from the
//! ontology, with a matching query set, reproducible from a seed.
//!
//! What makes them realistic enough to measure ranking on:
//! - **skewed entity popularity**: primary entities follow a Zipf law over a
//!   seeded shuffle of the ontology's entity classes (a few entities —
//!   "Order", "Invoice" — have thousands of tools, most have a handful);
//! - **look-alike families**: one verb and entity exist in several domains
//!   and for several integrations ("Create an invoice in Stripe / in
//!   Quickbooks", "Reserve a seat / a table / a room"), so lexical and dense
//!   scores tie and the qualifier decides;
//! - **descriptions with variation**: the verb and entity are written with
//!   any of their labels or synonyms, in one of several sentence shapes,
//!   with an optional second entity and a parameter list.
//!
//! Queries pick a tool and describe it with *other* synonyms and shapes,
//! as a planner would ("I need to book a table at Nobu"), naming the
//! qualifier most of the time.
//!
//! Output is the benchmark JSONL format (`tools.jsonl`, `queries.jsonl`),
//! so every command that reads a dataset reads a synthetic catalog.

use crate::error::{Error, Result};
use crate::graph::{GraphStore, OntologyFacts, OxigraphStore, Source, SourceData};
use crate::model::{LexEntry, TermKind};
use crate::vocab::slug;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How much to generate.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    pub tools: usize,
    pub queries: usize,
    pub seed: u64,
}

/// A generated catalog: one JSON object per tool and per query.
#[derive(Debug, Clone)]
pub struct Synthetic {
    pub tools: Vec<serde_json::Value>,
    pub queries: Vec<serde_json::Value>,
}

impl Synthetic {
    /// `tools.jsonl`'s text.
    pub fn tools_jsonl(&self) -> String {
        lines(&self.tools)
    }
    /// `queries.jsonl`'s text.
    pub fn queries_jsonl(&self) -> String {
        lines(&self.queries)
    }
}

fn lines(values: &[serde_json::Value]) -> String {
    let mut out = String::new();
    for v in values {
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// splitmix64: small, seeded, the same stream on every platform.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Zipf sampler over ranks 0..n (exponent `s`), by inverse CDF.
#[derive(Debug)]
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut acc = 0.0;
        let mut cdf = Vec::with_capacity(n);
        for k in 1..=n {
            acc += 1.0 / (k as f64).powf(s);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Self { cdf }
    }
    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

/// A node with every label it is known by (first = preferred).
#[derive(Debug, Clone)]
struct Term {
    iri: String,
    labels: Vec<String>,
}

impl Term {
    fn label(&self, rng: &mut Rng) -> &str {
        rng.pick(&self.labels).as_str()
    }
    fn pref(&self) -> &str {
        &self.labels[0]
    }
}

/// Groups lexicon entries by node, preferred label first.
fn terms(
    lexicon: &[LexEntry],
    labels: &HashMap<&str, &str>,
    keep: impl Fn(&TermKind) -> bool,
) -> Vec<Term> {
    let mut by_iri: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for e in lexicon.iter().filter(|e| keep(&e.kind)) {
        let list = by_iri.entry(e.iri.as_str()).or_default();
        let label = e.label.trim().to_lowercase();
        // One- to three-word labels read naturally in a sentence.
        if !label.is_empty() && label.split_whitespace().count() <= 3 && !list.contains(&label) {
            list.push(label);
        }
    }
    by_iri
        .into_iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(iri, mut l)| {
            if let Some(pref) = labels.get(iri).map(|p| p.to_lowercase())
                && let Some(pos) = l.iter().position(|x| *x == pref)
            {
                l.swap(0, pos);
            }
            Term {
                iri: iri.to_string(),
                labels: l,
            }
        })
        .collect()
}

/// Domains a generated tool may belong to (its `meta.field` prefix).
const DOMAINS: [&str; 16] = [
    "travel",
    "dining",
    "finance",
    "payments",
    "commerce",
    "crm",
    "support",
    "marketing",
    "health",
    "education",
    "media",
    "productivity",
    "communications",
    "devops",
    "hr",
    "real estate",
];

const CATEGORIES: [&str; 6] = [
    "booking",
    "records",
    "analytics",
    "messaging",
    "automation",
    "search",
];

/// Sentence shapes of a description: {v} verb, {e} entity, {x} extra clause.
const TOOL_SHAPES: [&str; 8] = [
    "{V} a {e}{x}.",
    "{V} {e} records{x}.",
    "Use this tool to {v} a {e}{x}.",
    "Lets an assistant {v} the {e}{x}.",
    "{V} one or more {e} entries{x}.",
    "API endpoint that can {v} a {e}{x}.",
    "Quickly {v} a {e}{x} and return the result.",
    "{V} the {e}{x}; returns a status and an identifier.",
];

const QUERY_SHAPES: [&str; 8] = [
    "{v} a {e}{x}",
    "I need to {v} the {e}{x}",
    "Can you {v} a {e}{x}?",
    "Please {v} my {e}{x}.",
    "help me {v} a {e}{x}",
    "{V} the {e}{x} for me",
    "I want to {v} a new {e}{x}",
    "could you {v} this {e}{x} now",
];

/// Reads the ontology's Turtle under `ontology` and generates from it.
pub fn from_ontology(ontology: &Path, opts: &SynthOptions) -> Result<Synthetic> {
    let (lexicon, facts) = read_ontology(ontology)?;
    Ok(generate(&lexicon, &facts, opts))
}

/// The lexicon and facts of the Turtle under `dir`.
fn read_ontology(dir: &Path) -> Result<(Vec<LexEntry>, OntologyFacts)> {
    let files = crate::import::collect_files(&[dir.to_path_buf()])?;
    let sources: Vec<Source> =
        crate::import::read_files(&files, Some(crate::import::Format::Turtle))?
            .into_iter()
            .filter_map(|input| match input {
                crate::import::Input::Turtle { name, text } => Some(Source {
                    name,
                    data: SourceData::Turtle(text),
                }),
                crate::import::Input::Manifest { .. } => None,
            })
            .collect();
    let store = OxigraphStore::memory()?;
    store.load(&sources)?;
    Ok((store.lexicon()?, store.ontology()?))
}

/// [`from_ontology`], written to `out/tools.jsonl` and `out/queries.jsonl`
/// (returned in that order).
pub fn write(ontology: &Path, opts: &SynthOptions, out: &Path) -> Result<(PathBuf, PathBuf)> {
    let synthetic = from_ontology(ontology, opts)?;
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let tools = out.join("tools.jsonl");
    let queries = out.join("queries.jsonl");
    std::fs::write(&tools, synthetic.tools_jsonl()).map_err(|e| Error::io(&tools, e))?;
    std::fs::write(&queries, synthetic.queries_jsonl()).map_err(|e| Error::io(&queries, e))?;
    Ok((tools, queries))
}

/// Generates a catalog from the ontology's lexicon and facts.
pub fn generate(lexicon: &[LexEntry], facts: &OntologyFacts, opts: &SynthOptions) -> Synthetic {
    let mut rng = Rng(opts.seed ^ 0x5EED_7001);
    let labels: HashMap<&str, &str> = facts
        .labels
        .iter()
        .map(|(i, l)| (i.as_str(), l.as_str()))
        .collect();
    let verbs = terms(lexicon, &labels, |k| matches!(k, TermKind::Verb));
    let mut entities = terms(lexicon, &labels, |k| matches!(k, TermKind::Entity));
    let instances = terms(lexicon, &labels, |k| matches!(k, TermKind::Instance { .. }));
    if verbs.is_empty() || entities.is_empty() {
        return Synthetic {
            tools: Vec::new(),
            queries: Vec::new(),
        };
    }
    // Popularity: a seeded shuffle, then Zipf over ranks.
    for i in (1..entities.len()).rev() {
        let j = rng.below(i + 1);
        entities.swap(i, j);
    }
    let by_iri: HashMap<&str, usize> = entities
        .iter()
        .enumerate()
        .map(|(i, e)| (e.iri.as_str(), i))
        .collect();
    let mut siblings: HashMap<usize, Vec<usize>> = HashMap::new();
    for (a, b) in &facts.siblings {
        if let (Some(&a), Some(&b)) = (by_iri.get(a.as_str()), by_iri.get(b.as_str())) {
            siblings.entry(a).or_default().push(b);
        }
    }
    let world = World {
        entity_zipf: Zipf::new(entities.len(), 1.0),
        verb_zipf: Zipf::new(verbs.len(), 0.6),
        verbs,
        entities,
        instances,
        siblings,
    };
    let (tools, made) = world.tools(&mut rng, opts.tools);
    let queries = world.queries(&mut rng, &tools, &made, opts.queries);
    Synthetic { tools, queries }
}

/// What tools and queries are drawn from.
struct World {
    verbs: Vec<Term>,
    entities: Vec<Term>,
    instances: Vec<Term>,
    entity_zipf: Zipf,
    verb_zipf: Zipf,
    siblings: HashMap<usize, Vec<usize>>,
}

impl World {
    /// `n` tools in families: one verb and entity, several members that
    /// differ by qualifier (an integration or a domain) or by a sibling
    /// entity.
    fn tools(&self, rng: &mut Rng, n: usize) -> (Vec<Value>, Vec<Made>) {
        // (Grown past a million: an absurd count fails as it allocates,
        // not up front.)
        let mut tools = Vec::with_capacity(n.min(1 << 20));
        let mut made: Vec<Made> = Vec::with_capacity(n.min(1 << 20));
        let mut names: HashSet<String> = HashSet::new();
        while tools.len() < n {
            let verb = self.verb_zipf.sample(rng);
            let entity = self.entity_zipf.sample(rng);
            let members = 1 + rng.below(4);
            for m in 0..members {
                if tools.len() >= n {
                    break;
                }
                let entity = match self.siblings.get(&entity) {
                    Some(s) if m > 0 && rng.chance(0.4) => *rng.pick(s),
                    _ => entity,
                };
                let (tool, member) = self.member(rng, verb, entity, &mut names);
                tools.push(tool);
                made.push(member);
            }
        }
        (tools, made)
    }

    /// One member of a family, named uniquely.
    fn member(
        &self,
        rng: &mut Rng,
        verb: usize,
        entity: usize,
        names: &mut HashSet<String>,
    ) -> (Value, Made) {
        let (verbs, entities, instances) = (&self.verbs, &self.entities, &self.instances);
        let qualifier = if !instances.is_empty() && rng.chance(0.55) {
            Qualifier::Brand(rng.below(instances.len()))
        } else {
            Qualifier::Domain(rng.below(DOMAINS.len()))
        };
        let extra = rng
            .chance(0.5)
            .then(|| self.entity_zipf.sample(rng))
            .filter(|&e| e != entity);
        let made_tool = Made {
            verb,
            entity,
            extra,
            qualifier,
        };
        let v = &verbs[verb];
        let e = &entities[entity];
        let q = made_tool.qualifier_label(instances);
        let mut name =
            format!("{}_{}_{}", slug(v.pref()), slug(e.pref()), slug(&q)).replace('-', "_");
        if !names.insert(name.clone()) {
            let mut n = 2;
            while !names.insert(format!("{name}_{n}")) {
                n += 1;
            }
            name = format!("{name}_{n}");
        }
        let shape = *rng.pick(&TOOL_SHAPES);
        let x = made_tool.clause(entities, instances, rng);
        let description = fill(shape, v.label(rng), e.label(rng), &x);
        let domain = match made_tool.qualifier {
            Qualifier::Domain(d) => DOMAINS[d],
            Qualifier::Brand(_) => DOMAINS[(entity + verb) % DOMAINS.len()],
        };
        let params = params(e, extra.map(|x| &entities[x]), rng);
        let tool = json!({
            "id": name,
            "name": name,
            "description": description,
            "parameters": params,
            "source": "toolgraph synth",
            "meta": {"field": format!("{domain}/{}", rng.pick(&CATEGORIES))},
        });
        (tool, made_tool)
    }

    /// `n` queries, each for one drawn tool.
    fn queries(&self, rng: &mut Rng, tools: &[Value], made: &[Made], n: usize) -> Vec<Value> {
        // No tool to ask for: no query (a catalog of 0 tools panicked here).
        if tools.is_empty() || made.len() < tools.len() {
            return Vec::new();
        }
        let mut queries = Vec::new();
        for i in 0..n {
            let t = rng.below(tools.len());
            let m = &made[t];
            let v = &self.verbs[m.verb];
            let e = &self.entities[m.entity];
            let x = if rng.chance(0.8) {
                m.clause(&self.entities, &self.instances, rng)
            } else {
                String::new()
            };
            let shape = QUERY_SHAPES[rng.below(QUERY_SHAPES.len())];
            let text = fill(shape, v.label(rng), e.label(rng), &x);
            queries.push(json!({
                "id": format!("synth-{i}"),
                "query": text,
                "gold": [tools[t]["id"]],
                "split": "test",
                "tags": ["synthetic", if x.is_empty() { "unqualified" } else { "qualified" }],
            }));
        }
        queries
    }
}

#[derive(Debug, Clone, Copy)]
enum Qualifier {
    /// An integration: a named instance of the ontology ("via Stripe").
    Brand(usize),
    /// A domain word ("for payments").
    Domain(usize),
}

/// What a generated tool was made of (queries describe it again).
#[derive(Debug, Clone, Copy)]
struct Made {
    verb: usize,
    entity: usize,
    extra: Option<usize>,
    qualifier: Qualifier,
}

impl Made {
    fn qualifier_label(&self, instances: &[Term]) -> String {
        match self.qualifier {
            Qualifier::Brand(b) => instances[b].pref().to_string(),
            Qualifier::Domain(d) => DOMAINS[d].to_string(),
        }
    }

    /// " for a customer via Stripe", " in payments".
    fn clause(&self, entities: &[Term], instances: &[Term], rng: &mut Rng) -> String {
        let mut x = String::new();
        if let Some(extra) = self.extra {
            let prep = rng.pick(&["for", "with", "from", "linked to"]);
            x.push_str(&format!(" {prep} a {}", entities[extra].label(rng)));
        }
        match self.qualifier {
            Qualifier::Brand(b) => {
                let prep = rng.pick(&["via", "on", "in", "using"]);
                x.push_str(&format!(" {prep} {}", instances[b].label(rng)));
            }
            Qualifier::Domain(d) => {
                let prep = rng.pick(&["for", "in"]);
                x.push_str(&format!(" {prep} {}", DOMAINS[d]));
            }
        }
        x
    }
}

fn fill(shape: &str, verb: &str, entity: &str, extra: &str) -> String {
    let mut cap = verb.to_string();
    if let Some(first) = cap.get(0..1) {
        cap.replace_range(0..1, &first.to_uppercase());
    }
    let text = shape
        .replace("{V}", &cap)
        .replace("{v}", verb)
        .replace("{e}", entity)
        .replace("{x}", extra);
    match text.strip_prefix("{V}") {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

fn params(entity: &Term, extra: Option<&Term>, rng: &mut Rng) -> serde_json::Value {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    let id = format!("{}_id", slug(entity.pref()).replace('-', "_"));
    properties.insert(
        id.clone(),
        json!({"type": "string", "description": format!("Identifier of the {}", entity.pref())}),
    );
    required.push(id);
    if let Some(x) = extra {
        let name = slug(x.pref()).replace('-', "_");
        properties.insert(
            name,
            json!({"type": "string", "description": format!("The {} it concerns", x.pref())}),
        );
    }
    for (name, desc) in [
        ("date", "When, as an ISO 8601 date"),
        ("limit", "Maximum number of results"),
        ("notes", "Free-text notes"),
    ] {
        if rng.chance(0.35) {
            properties.insert(name.into(), json!({"type": "string", "description": desc}));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ontology() -> (Vec<LexEntry>, OntologyFacts) {
        read_ontology(&Path::new(env!("CARGO_MANIFEST_DIR")).join("ontology"))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_catalog_of_no_tools_has_no_queries() {
        let (lex, facts) = ontology();
        let opts = SynthOptions {
            tools: 0,
            queries: 50,
            seed: 7,
        };
        let empty = generate(&lex, &facts, &opts);
        assert!(empty.tools.is_empty() && empty.queries.is_empty());
        assert_eq!(empty.queries_jsonl(), "");
    }

    #[test]
    fn seeded_unique_skewed_and_queries_name_real_tools() {
        let (lex, facts) = ontology();
        let opts = SynthOptions {
            tools: 2_000,
            queries: 300,
            seed: 7,
        };
        let a = generate(&lex, &facts, &opts);
        let b = generate(&lex, &facts, &opts);
        assert_eq!(a.tools_jsonl(), b.tools_jsonl(), "same seed, same catalog");
        assert_eq!(a.queries_jsonl(), b.queries_jsonl());
        assert_eq!(a.tools.len(), 2_000);
        assert_eq!(a.queries.len(), 300);
        let ids: HashSet<&str> = a.tools.iter().filter_map(|t| t["id"].as_str()).collect();
        assert_eq!(ids.len(), 2_000, "names are unique");
        for q in &a.queries {
            let gold = q["gold"][0].as_str().unwrap_or_default();
            assert!(ids.contains(gold), "{q}");
            assert!(
                q["query"]
                    .as_str()
                    .is_some_and(|t| t.split_whitespace().count() >= 3)
            );
        }
        // Skew: the most common primary-entity slug covers far more tools
        // than the median one.
        let mut per_entity: HashMap<String, usize> = HashMap::new();
        for t in &a.tools {
            let id = t["parameters"]["required"][0].as_str().unwrap_or_default();
            *per_entity.entry(id.to_string()).or_default() += 1;
        }
        let mut counts: Vec<usize> = per_entity.values().copied().collect();
        counts.sort_unstable();
        let median = counts[counts.len() / 2];
        assert!(counts[counts.len() - 1] >= 10 * median, "{counts:?}");
        // Every tool parses with the JSONL importer.
        let parsed = crate::import::parse_input(
            "synth.jsonl",
            &a.tools_jsonl(),
            Some(crate::import::Format::Jsonl),
        );
        assert!(parsed.is_ok(), "{:?}", parsed.err());
        let c = generate(&lex, &facts, &SynthOptions { seed: 8, ..opts });
        assert_ne!(
            a.tools_jsonl(),
            c.tools_jsonl(),
            "another seed, another catalog"
        );
    }
}
