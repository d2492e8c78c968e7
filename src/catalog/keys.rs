//! The catalog's lookups of a tool by IRI and by name or id. Each entry is
//! the tool's index (4 bytes) in a table hashed by the key the tool
//! already holds, not a copy of that key: maps keyed by copied IRIs and
//! lower-cased names, with a `Vec` per name, held about 0.4 KB per tool.

use crate::model::Tool;
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::{BuildHasher, Hasher};

/// A tool's IRI, and its name and id compared without case.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolKeys {
    iri: HashTable<u32>,
    /// A tool's entry for its name, and one with [`ID`] set for its id
    /// when that differs.
    name: HashTable<u32>,
}

/// Set in a name entry that stands for the tool's id.
const ID: u32 = 1 << 31;

fn exact(s: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(s)
}

fn fold(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().flat_map(char::to_lowercase)
}

fn folded(s: &str) -> u64 {
    let mut h = FxHasher::default();
    for c in fold(s) {
        h.write_u32(u32::from(c));
    }
    h.finish()
}

/// The key a name entry stands for.
fn name_key(tools: &[Tool], entry: u32) -> &str {
    let tool = &tools[(entry & !ID) as usize];
    if entry & ID == 0 {
        &tool.name
    } else {
        &tool.id
    }
}

impl ToolKeys {
    /// The keys of `tools` (a tool's index is its place there). A later
    /// tool with an IRI seen before takes it over; tools past 2^31 (far
    /// beyond any catalog) are not indexed.
    pub fn of(tools: &[Tool]) -> Self {
        let mut keys = Self {
            iri: HashTable::with_capacity(tools.len()),
            name: HashTable::with_capacity(tools.len()),
        };
        let iri_of = |&e: &u32| exact(&tools[e as usize].iri);
        let name_of = |&e: &u32| folded(name_key(tools, e));
        for (i, t) in tools.iter().enumerate() {
            let Some(i) = u32::try_from(i).ok().filter(|&i| i < ID) else {
                break;
            };
            let hash = exact(&t.iri);
            match keys.iri.find_mut(hash, |&e| tools[e as usize].iri == t.iri) {
                Some(e) => *e = i,
                None => {
                    keys.iri.insert_unique(hash, i, iri_of);
                }
            }
            keys.name.insert_unique(folded(&t.name), i, name_of);
            if t.id != t.name {
                keys.name.insert_unique(folded(&t.id), i | ID, name_of);
            }
        }
        keys
    }

    /// The tool with this IRI.
    pub fn iri(&self, tools: &[Tool], iri: &str) -> Option<usize> {
        self.iri
            .find(exact(iri), |&e| {
                tools.get(e as usize).is_some_and(|t| t.iri == iri)
            })
            .map(|&e| e as usize)
    }

    /// The first tool (lowest index) whose name or id is `name` when case
    /// is ignored.
    pub fn name(&self, tools: &[Tool], name: &str) -> Option<usize> {
        self.name
            .iter_hash(folded(name))
            .filter(|&&e| (e & !ID) < tools.len() as u32 && fold(name_key(tools, e)).eq(fold(name)))
            .map(|&e| (e & !ID) as usize)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(iri: &str, name: &str, id: &str) -> Tool {
        Tool {
            iri: iri.into(),
            name: name.into(),
            id: id.into(),
            ..Tool::default()
        }
    }

    #[test]
    fn finds_by_iri_and_by_name_or_id_without_case() {
        let tools = vec![
            tool("urn:a", "Book_Flight", "book_flight"),
            tool("urn:b", "cancel", "CancelTrip"),
            tool("urn:c", "BOOK_flight", "other"),
        ];
        let keys = ToolKeys::of(&tools);
        assert_eq!(keys.iri(&tools, "urn:b"), Some(1));
        assert_eq!(keys.iri(&tools, "urn:B"), None);
        assert_eq!(keys.iri(&tools, "urn:z"), None);
        // Names shared by two tools: the first one.
        assert_eq!(keys.name(&tools, "book_FLIGHT"), Some(0));
        assert_eq!(keys.name(&tools, "canceltrip"), Some(1));
        assert_eq!(keys.name(&tools, "OTHER"), Some(2));
        assert_eq!(keys.name(&tools, "book"), None);
        assert_eq!(keys.name(&tools, ""), None);
    }

    #[test]
    fn a_later_tool_takes_over_an_iri_and_grows_past_its_capacity() {
        let tools: Vec<Tool> = (0..1000)
            .map(|i| {
                tool(
                    &format!("urn:{}", i % 600),
                    &format!("T{i}"),
                    &format!("t{i}"),
                )
            })
            .collect();
        let keys = ToolKeys::of(&tools);
        assert_eq!(keys.iri(&tools, "urn:5"), Some(605));
        assert_eq!(keys.iri(&tools, "urn:599"), Some(599));
        assert_eq!(keys.name(&tools, "t999"), Some(999));
        // A name that folds to another tool's id is still that first tool.
        assert_eq!(keys.name(&tools, "T0"), Some(0));
        // Lookups against a shorter tool list never index past it.
        assert_eq!(keys.name(&tools[..10], "t999"), None);
        assert_eq!(keys.iri(&tools[..10], "urn:599"), None);
    }
}
