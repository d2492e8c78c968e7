//! An immutable snapshot of everything ranking needs: tools, lexicon,
//! lexical and vector indexes, ontology facts. Built after every change and
//! swapped in whole, so readers never see a half-updated catalog.

mod categories;
pub(crate) mod deps;
mod keys;
pub(crate) mod paths;
mod rest;
mod typed;

use crate::embed::Vectors;
use crate::error::{Error, Result};
use crate::extract::{Extractor, Lexicon};
use crate::graph::{OntologyFacts, ToolLink};
use crate::lexical::{Bm25, NameIndex, tokenize};
use crate::model::{LexEntry, Tool};
use crate::scope::Scope;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[derive(Debug)]
pub(crate) struct Catalog {
    tools: Vec<Tool>,
    /// Each tool by IRI, and by name and id without case.
    keys: keys::ToolKeys,
    /// Source name -> its tools (what reloading or unloading it replaces).
    by_source: HashMap<Arc<str>, Vec<usize>>,
    /// Domain IRI -> its tools.
    by_domain: HashMap<Arc<str>, Vec<usize>>,
    extractor: Extractor,
    bm25: Bm25,
    names: NameIndex,
    /// Vector row of each tool (same order as `tools`), when embeddings are on.
    vectors: Option<Vectors>,
    /// (`u32::MAX`: none; four bytes a tool, not sixteen.)
    vector_row: Vec<u32>,
    /// The tool of each vector row (the inverse of `vector_row`;
    /// `u32::MAX`: none), read through [`Catalog::tool_of_row`]. Four bytes
    /// a row: the dense channel's first pass reads it for every row (at
    /// 100k tools, 0.4 MB per query instead of 1.6 MB as `Option<usize>`).
    row_tool: Vec<u32>,
    /// Vector rows no tool has.
    rows_without_tool: usize,
    /// The tools without a vector row, ascending.
    without_vector: Vec<usize>,
    /// Number of tools acting on each entity node (for IDF).
    entity_df: HashMap<Arc<str>, usize>,
    broader: HashMap<String, Vec<String>>,
    /// Declared and inferred `dependsOn` edges between tool indexes.
    deps: deps::Dependencies,
    labels: HashMap<String, String>,
    /// The graph channel's adjacency (verbs, entities, ontology hierarchy).
    paths: paths::Paths,
}

/// The catalog's lookups by source and domain, and how many tools act on
/// each entity.
struct Lookups {
    by_source: HashMap<Arc<str>, Vec<usize>>,
    by_domain: HashMap<Arc<str>, Vec<usize>>,
    entity_df: HashMap<Arc<str>, usize>,
}

impl Lookups {
    fn of(tools: &[Tool]) -> Self {
        let mut l = Lookups {
            by_source: HashMap::new(),
            by_domain: HashMap::new(),
            entity_df: HashMap::new(),
        };
        for (i, t) in tools.iter().enumerate() {
            l.by_source.entry(t.source.clone()).or_default().push(i);
            for d in &t.domains {
                let tools = l.by_domain.entry(d.iri.clone()).or_default();
                if tools.last() != Some(&i) {
                    tools.push(i);
                }
            }
            let mut seen = HashSet::new();
            for e in &t.entities {
                if seen.insert(&*e.iri) {
                    *l.entity_df.entry(e.iri.clone()).or_default() += 1;
                }
            }
        }
        for list in l.by_source.values_mut().chain(l.by_domain.values_mut()) {
            list.shrink_to_fit();
        }
        l
    }
}

/// Which vector row each tool has, which tool each row is, and the tools
/// without one.
struct Rows {
    vector_row: Vec<u32>,
    row_tool: Vec<u32>,
    without_vector: Vec<usize>,
}

impl Rows {
    fn of(tools: &[Tool], vectors: Option<&Vectors>) -> Self {
        let row_of = |t: &Tool| {
            let row = vectors.and_then(|v| v.index.row_of(&t.id))?;
            u32::try_from(row).ok().filter(|&r| r != u32::MAX)
        };
        let vector_row: Vec<u32> = tools
            .iter()
            .map(|t| row_of(t).unwrap_or(u32::MAX))
            .collect();
        let mut row_tool = vec![u32::MAX; vectors.map_or(0, |v| v.index.len())];
        let mut without_vector = Vec::new();
        for (tool, &row) in vector_row.iter().enumerate() {
            match (row_tool.get_mut(row as usize), u32::try_from(tool)) {
                (Some(slot), Ok(t)) if t != u32::MAX => *slot = t,
                _ => without_vector.push(tool),
            }
        }
        Rows {
            vector_row,
            row_tool,
            without_vector,
        }
    }
}

/// `tools` copied on a thread of its own, the originals freed. Read from
/// the store, a tool's strings sit in the allocator's pages between the
/// read's temporaries (quads, link rows, map nodes); once those are freed
/// the pages stay partly used and none goes back to the OS. Copied, the
/// tools fill pages of their own, and the originals' pages come free
/// whole. Falls back to the originals if no thread can be started or
/// the copy panics.
fn compact(tools: Vec<Tool>) -> Vec<Tool> {
    let copy = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("toolgraph-compact".into())
            .spawn_scoped(s, || tools.clone())
            .ok()?
            .join()
            .ok()
    });
    copy.unwrap_or(tools)
}

/// The text BM25 indexes for a tool: name (split), description and, with
/// `params`, parameter names.
pub(crate) fn lexical_text(tool: &Tool, params: bool) -> String {
    let mut text = String::with_capacity(tool.description.len() + 64);
    text.push_str(&tokenize(&tool.name).join(" "));
    text.push(' ');
    text.push_str(&tool.description);
    for p in tool.params.iter().filter(|_| params) {
        text.push(' ');
        text.push_str(&tokenize(&p.name).join(" "));
    }
    text
}

impl Catalog {
    /// An empty snapshot (before the first load).
    pub fn empty() -> Self {
        Self::build(
            Vec::new(),
            Vec::new(),
            OntologyFacts::default(),
            &[],
            None,
            true,
        )
    }

    /// Every tool, in catalog order (a tool's index is its place here).
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The index of the tool with this IRI.
    pub fn iri_index(&self, iri: &str) -> Option<usize> {
        self.keys.iri(&self.tools, iri)
    }

    /// Each domain IRI with its tools.
    pub fn domains(&self) -> impl Iterator<Item = (&str, &[usize])> {
        self.by_domain
            .iter()
            .map(|(iri, tools)| (&**iri, tools.as_slice()))
    }

    /// The request extractor over this catalog's lexicon.
    pub fn extractor(&self) -> &Extractor {
        &self.extractor
    }

    /// BM25 over the tools' names, descriptions and parameters.
    pub fn bm25(&self) -> &Bm25 {
        &self.bm25
    }

    /// The tools `request` names as an identifier (see [`NameIndex`]),
    /// longest name first.
    pub fn named_in(&self, request: &str) -> Vec<usize> {
        self.names.find(request, |i| {
            self.tools.get(i).map_or("", |t| t.name.as_str())
        })
    }

    /// The tool vectors, when embeddings are on.
    pub fn vectors(&self) -> Option<&Vectors> {
        self.vectors.as_ref()
    }

    /// The vector row of tool `idx`.
    pub fn vector_row(&self, idx: usize) -> Option<usize> {
        self.vector_row
            .get(idx)
            .filter(|&&r| r != u32::MAX)
            .map(|&r| r as usize)
    }

    /// The tools without a vector row, ascending.
    pub fn without_vector(&self) -> &[usize] {
        &self.without_vector
    }

    /// Declared and inferred `dependsOn` edges.
    pub fn deps(&self) -> &deps::Dependencies {
        &self.deps
    }

    /// The graph channel's adjacency.
    pub fn paths(&self) -> &paths::Paths {
        &self.paths
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Tool `idx`.
    pub fn tool(&self, idx: usize) -> Option<&Tool> {
        self.tools.get(idx)
    }

    /// Tool `idx`'s name (empty for an index it does not hold).
    pub fn name(&self, idx: usize) -> &str {
        self.tools.get(idx).map_or("", |t| t.name.as_str())
    }

    /// Whether the catalog has tool vectors (the dense channel can rank).
    pub fn has_vectors(&self) -> bool {
        self.vectors.is_some()
    }

    /// Which lexicon entries a caller who may see `scope` may match: the
    /// curated ones, and a minted one only when it leads to a tool in
    /// scope (a term minted from a hidden tool's text is not the caller's
    /// to learn of).
    pub fn sees<'s>(&'s self, scope: &'s Scope) -> impl Fn(&LexEntry) -> bool + 's {
        move |e: &LexEntry| !e.minted || self.paths.reaches(&e.iri, scope)
    }

    /// The lexicon's entries (what registration extends with new Turtle).
    pub fn lexicon_entries(&self) -> &[LexEntry] {
        self.extractor.lexicon().entries()
    }

    pub fn build(
        tools: Vec<Tool>,
        lexicon: Vec<LexEntry>,
        facts: OntologyFacts,
        links: &[ToolLink],
        vectors: Option<Vectors>,
        lexical_params: bool,
    ) -> Self {
        let mut tools = tools;
        categories::infer(&mut tools);
        let tools = compact(tools);
        let keys = keys::ToolKeys::of(&tools);
        let Lookups {
            by_source,
            by_domain,
            entity_df,
        } = Lookups::of(&tools);
        let docs: Vec<String> = tools
            .iter()
            .map(|t| lexical_text(t, lexical_params))
            .collect();
        let bm25 = Bm25::new(&docs);
        let names = NameIndex::new(tools.iter().map(|t| t.name.as_str()));
        let rows = Rows::of(&tools, vectors.as_ref());
        let paths = paths::Paths::build(links, &facts, |iri| keys.iri(&tools, iri));
        // skos:broader and instanceOf parents together, in one sorted order
        let mut parents: Vec<(String, String)> =
            facts.broader.into_iter().chain(facts.instance_of).collect();
        parents.sort();
        parents.dedup();
        let mut broader: HashMap<String, Vec<String>> = HashMap::new();
        for (a, b) in parents {
            broader.entry(a).or_default().push(b);
        }
        let labels = facts.labels.into_iter().collect();
        let extractor = Extractor::new(Lexicon::new(lexicon));
        let deps =
            deps::Dependencies::build(&tools, |name| keys.name(&tools, name), &broader, &extractor);
        Self {
            tools,
            keys,
            by_source,
            by_domain,
            extractor,
            bm25,
            names,
            vectors,
            vector_row: rows.vector_row,
            rows_without_tool: rows.row_tool.iter().filter(|&&t| t == u32::MAX).count(),
            row_tool: rows.row_tool,
            without_vector: rows.without_vector,
            entity_df,
            broader,
            deps,
            labels,
            paths,
        }
    }

    /// The tools a request names as its candidates (ids, names or IRIs),
    /// within `within`; a name outside it is reported like an unknown one,
    /// so an error never tells a hidden tool from a missing one.
    pub fn named(&self, within: &Scope, names: &[String]) -> Result<Scope> {
        let mut s = Scope::none(self.tools.len());
        let mut unknown = Vec::new();
        for n in names {
            match self.find(n).filter(|&i| within.contains(i)) {
                Some(i) => {
                    s.insert(i);
                }
                None => unknown.push(n.as_str()),
            }
        }
        if !unknown.is_empty() {
            return Err(Error::invalid_field(
                crate::error::Field::SearchCandidates,
                format!("unknown candidate tool(s): {}", unknown.join(", ")),
            ));
        }
        Ok(s)
    }

    /// The tools of a domain, by IRI, local name (`travel`) or label.
    pub fn in_domain(&self, key: &str) -> &[usize] {
        let found = self.by_domain.get(key).or_else(|| {
            self.by_domain.iter().find_map(|(iri, tools)| {
                let named = crate::vocab::local_name(iri).eq_ignore_ascii_case(key)
                    || self
                        .labels
                        .get(&**iri)
                        .is_some_and(|l| l.eq_ignore_ascii_case(key));
                named.then_some(tools)
            })
        });
        found.map_or(&[], Vec::as_slice)
    }

    /// The tools a source registered.
    pub fn of_source(&self, source: &str) -> &[usize] {
        self.by_source.get(source).map_or(&[], Vec::as_slice)
    }

    /// Finds a tool by name, id or IRI (case-insensitive for names).
    pub fn find(&self, key: &str) -> Option<usize> {
        self.keys
            .iri(&self.tools, key)
            .or_else(|| self.keys.name(&self.tools, key))
    }

    /// Whether every vector row belongs to a tool.
    pub fn every_row_has_a_tool(&self) -> bool {
        self.rows_without_tool == 0
    }

    /// The tool whose vector is row `row`.
    pub fn tool_of_row(&self, row: usize) -> Option<usize> {
        self.row_tool
            .get(row)
            .filter(|&&t| t != u32::MAX)
            .map(|&t| t as usize)
    }

    /// Inverse document frequency of an entity node over tools, in [0, 1].
    pub fn idf(&self, iri: &str) -> f32 {
        let n = self.tools.len().max(1) as f32;
        let df = self.entity_df.get(iri).copied().unwrap_or(0) as f32;
        ((1.0 + n / (df + 1.0)).ln() / (1.0 + n).ln()).clamp(0.05, 1.0)
    }

    /// The preferred label of a node, or its local name.
    /// The IRI of a category the ontology declares, named by IRI, local
    /// name or label (case and separators ignored).
    pub fn category_iri(&self, name: &str) -> Option<String> {
        let squash = crate::vocab::squash;
        let k = squash(name);
        self.labels
            .iter()
            .filter(|(iri, _)| iri.starts_with(crate::vocab::CATEGORY))
            .find(|(iri, label)| {
                iri.as_str() == name
                    || squash(crate::vocab::local_name(iri)) == k
                    || squash(label) == k
            })
            .map(|(iri, _)| iri.clone())
    }

    pub fn label(&self, iri: &str) -> String {
        self.labels.get(iri).cloned().unwrap_or_else(|| {
            iri.rsplit(['/', '#'])
                .next()
                .unwrap_or(iri)
                .replace('_', " ")
        })
    }

    /// `iri` and its skos:broader / instanceOf ancestors up to `depth` hops.
    pub fn ancestors(&self, iri: &str, depth: usize) -> Vec<(String, usize)> {
        let mut out = vec![(iri.to_string(), 0)];
        let mut frontier = vec![iri.to_string()];
        let mut seen: HashSet<String> = HashSet::from([iri.to_string()]);
        for hop in 1..=depth {
            let mut next = Vec::new();
            for node in &frontier {
                for parent in self.broader.get(node).into_iter().flatten() {
                    if seen.insert(parent.clone()) {
                        out.push((parent.clone(), hop));
                        next.push(parent.clone());
                    }
                }
            }
            frontier = next;
        }
        out
    }
}

impl Catalog {
    /// Tools to run before `idx` that `scope` may see, nearest first,
    /// following declared edges and inferred ones at or above
    /// `min_inferred`, where `choose` decides which of a tool's edges the
    /// walk takes (see [`deps::Dependencies::prerequisites_chosen`]).
    pub fn prerequisites_chosen<'e>(
        &'e self,
        idx: usize,
        scope: &Scope,
        min_inferred: f32,
        choose: &deps::Choose<'e>,
    ) -> Vec<deps::Prerequisite<'e>> {
        self.deps
            .prerequisites_chosen(idx, scope, min_inferred, choose)
    }

    /// The running order of prerequisites already walked for `idx`.
    pub fn running_order_of(&self, idx: usize, walked: &[deps::Prerequisite<'_>]) -> Vec<usize> {
        self.deps.order_of(idx, walked)
    }

    /// The names of some tools, in order.
    pub fn names_of(&self, idxs: &[usize]) -> Vec<String> {
        idxs.iter()
            .filter_map(|&i| self.tools.get(i).map(|t| t.name.clone()))
            .collect()
    }

    /// Renders tools for an LLM prompt within a token budget (about 4
    /// characters a token): name, category, description, parameters. Tools
    /// outside `scope` are skipped; the tools rendered come back too.
    pub fn render_prompt(
        &self,
        idxs: &[usize],
        scope: &Scope,
        budget_tokens: usize,
    ) -> (String, Vec<usize>) {
        let budget = budget_tokens.saturating_mul(4);
        let mut out = String::new();
        let mut rendered = Vec::new();
        for &i in idxs.iter().filter(|&&i| scope.contains(i)) {
            let Some(t) = self.tools.get(i) else { continue };
            let mut block = format!("- {}", t.name);
            if let Some(c) = t.categories.first().or(t.domains.first()) {
                block.push_str(&format!(" [{}]", c.label));
            }
            block.push_str(&format!(": {}\n", t.description.trim()));
            for p in &t.params {
                block.push_str(&format!(
                    "  - {}{}{}{}\n",
                    p.name,
                    p.ty.as_ref().map(|t| format!(" ({t})")).unwrap_or_default(),
                    if p.required { " required" } else { "" },
                    if p.description.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", p.description)
                    }
                ));
            }
            if out.len() + block.len() > budget {
                break;
            }
            out.push_str(&block);
            rendered.push(i);
        }
        (out, rendered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Param;

    #[test]
    fn compacted_tools_equal_the_originals_and_lookups_find_them() {
        let tools: Vec<Tool> = (0..50)
            .map(|i| Tool {
                iri: format!("urn:tool:{i}"),
                id: format!("tool_{i}"),
                name: format!("Tool_{i}"),
                description: format!("does thing {i}"),
                params: vec![Param::required("id")],
                ..Tool::default()
            })
            .collect();
        assert_eq!(compact(tools.clone()), tools);
        let catalog = Catalog::build(tools, Vec::new(), OntologyFacts::default(), &[], None, true);
        assert_eq!(catalog.find("urn:tool:7"), Some(7));
        assert_eq!(catalog.find("TOOL_7"), Some(7));
        assert_eq!(catalog.iri_index("urn:tool:49"), Some(49));
        assert_eq!(catalog.named_in("call tool_12 now"), vec![12]);
        assert_eq!(catalog.find("nothing"), None);
    }
}
