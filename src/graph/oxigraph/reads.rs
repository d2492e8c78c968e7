//! Every tool with its constellation flattened, from the store's rows.

use super::{OxigraphStore, source_name};
use crate::error::Result;
use crate::model::{Dependency, Link, Param, Provenance, Tool};
use crate::vocab::{self, local_name};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

const Q_TOOLS: &str = include_str!("../../../queries/tools.rq");
const Q_TOOL_LINKS: &str = include_str!("../../../queries/tool_links.rq");
const Q_NODE_LABELS: &str = include_str!("../../../queries/node_labels.rq");
const Q_TOOL_PARAMS: &str = include_str!("../../../queries/tool_params.rq");
const Q_TOOL_DEPENDENCIES: &str = include_str!("../../../queries/tool_dependencies.rq");
const Q_TOOL_SOURCES: &str = include_str!("../../../queries/tool_sources.rq");

/// Labels and names of the nodes tools link to.
struct Labels {
    labels: HashMap<String, (u8, String)>,
    names: HashMap<String, String>,
}

pub(super) fn parse_bool(s: Option<&String>) -> Option<bool> {
    s.map(|v| v == "true" || v == "1")
}

/// Keeps the least `value` seen for `key`.
fn keep_least<V: Ord>(map: &mut HashMap<String, V>, key: String, value: V) {
    match map.entry(key) {
        Entry::Occupied(mut e) => {
            if value < *e.get() {
                e.insert(value);
            }
        }
        Entry::Vacant(e) => {
            e.insert(value);
        }
    }
}

impl OxigraphStore {
    // Every choice below is independent of the order the store returns rows
    // in (which differs between backends, and between two parses of the same
    // Turtle): a tool two sources describe gets the same description, links
    // and parameters on every store, so the same embedding text and ranking.
    pub(super) fn read_tools(&self) -> Result<Vec<Tool>> {
        let mut tools = self.base_tools()?;
        let qualified = self.qualified_dependencies()?;
        let labels = self.node_labels()?;
        self.attach_links(&mut tools, &qualified, &labels)?;
        let params = self.params()?;
        self.attach_sources(&mut tools)?;
        Ok(finish(tools, params))
    }

    /// Each tool with its name, texts and flags.
    fn base_tools(&self) -> Result<BTreeMap<String, Tool>> {
        let mut tools: BTreeMap<String, Tool> = BTreeMap::new();
        for row in self.select_fixed(Q_TOOLS)? {
            let Some(iri) = row.get("tool") else { continue };
            let name = row
                .get("name")
                .cloned()
                .unwrap_or_else(|| iri.rsplit('/').next().unwrap_or(iri).to_string());
            let id = vocab::tool_id(iri).unwrap_or_else(|| name.clone());
            let text = |k: &str| row.get(k).cloned().unwrap_or_default();
            let read_only = parse_bool(row.get("readOnly")).unwrap_or(false);
            let universal = parse_bool(row.get("universal")).unwrap_or(false);
            // An upstream that does not parse is no upstream (the call
            // answers `no_upstream`; the store was written by this code).
            let upstream: Option<Box<crate::model::Upstream>> = row
                .get("upstream")
                .and_then(|j| serde_json::from_str(j).ok());
            match tools.get_mut(iri) {
                // Several sources describe it: the smallest name, the fullest
                // texts, and read-only or universal only when all agree.
                Some(t) => {
                    if name < t.name {
                        t.name = name;
                    }
                    for (field, value) in [
                        (&mut t.description, text("description")),
                        (&mut t.model_description, text("modelDescription")),
                    ] {
                        if (value.len(), &value) > (field.len(), field) {
                            *field = value;
                        }
                    }
                    t.read_only &= read_only;
                    t.universal &= universal;
                    // Two sources naming an upstream: the first in a fixed order.
                    let key = |u: &Option<Box<crate::model::Upstream>>| {
                        u.as_ref()
                            .map(|u| serde_json::to_string(u).unwrap_or_default())
                    };
                    if upstream.is_some()
                        && (t.upstream.is_none() || key(&upstream) < key(&t.upstream))
                    {
                        t.upstream = upstream;
                    }
                }
                None => {
                    tools.insert(
                        iri.clone(),
                        Tool {
                            iri: iri.clone(),
                            id,
                            name,
                            description: text("description"),
                            model_description: text("modelDescription"),
                            read_only,
                            universal,
                            upstream,
                            ..Tool::default()
                        },
                    );
                }
            }
        }
        Ok(tools)
    }

    /// The kind, parameter and reason of qualified dependencies, by (tool,
    /// target).
    fn qualified_dependencies(&self) -> Result<HashMap<(String, String), Dependency>> {
        let mut qualified: HashMap<(String, String), Dependency> = HashMap::new();
        for mut row in self.select_fixed(Q_TOOL_DEPENDENCIES)? {
            let (Some(tool), Some(on)) = (row.remove("tool"), row.remove("on")) else {
                continue;
            };
            qualified.insert(
                (tool, on),
                Dependency {
                    on: String::new(),
                    facts: crate::model::DependencyFacts {
                        kind: row.remove("kind"),
                        parameter: row.remove("parameter"),
                        reason: row.remove("reason"),
                    },
                },
            );
        }
        Ok(qualified)
    }

    /// Of a node's labels, the preferred one (then the smallest); and of
    /// its names the smallest: a dependency names the tool it needs.
    fn node_labels(&self) -> Result<Labels> {
        let mut labels: HashMap<String, (u8, String)> = HashMap::new();
        let mut names: HashMap<String, String> = HashMap::new();
        for mut row in self.select_fixed(Q_NODE_LABELS)? {
            let (Some(node), Some(label)) = (row.remove("node"), row.remove("label")) else {
                continue;
            };
            let rank = row
                .get("labelRank")
                .and_then(|r| r.parse::<u8>().ok())
                .unwrap_or(3);
            if rank == 1 {
                keep_least(&mut names, node.clone(), label.clone());
            }
            keep_least(&mut labels, node, (rank, label));
        }
        Ok(Labels { labels, names })
    }

    /// Each tool's links, strongest relation first.
    fn attach_links(
        &self,
        tools: &mut BTreeMap<String, Tool>,
        qualified: &HashMap<(String, String), Dependency>,
        Labels { labels, names }: &Labels,
    ) -> Result<()> {
        // Strongest relation first (a target both acted on and mentioned is
        // acted on), curated before extracted, then by target.
        let rank = |row: &HashMap<String, String>| {
            let rel = row
                .get("rel")
                .map_or("", |r| r.strip_prefix(vocab::TG).unwrap_or(r));
            let order = ["performs", "primaryEntity", "actsOn", "mentions"]
                .iter()
                .position(|r| *r == rel)
                .unwrap_or(4);
            let extracted = row.get("g").is_some_and(|g| g.ends_with("#extracted"));
            (
                row.get("tool").cloned(),
                order,
                rel.to_string(),
                extracted,
                row.get("target").cloned(),
            )
        };
        let mut link_rows = self.select_fixed(Q_TOOL_LINKS)?;
        link_rows.sort_by_cached_key(rank);
        for row in link_rows {
            let (Some(tool), Some(rel), Some(target)) =
                (row.get("tool"), row.get("rel"), row.get("target"))
            else {
                continue;
            };
            let Some(t) = tools.get_mut(tool) else {
                continue;
            };
            let provenance = if row.get("g").is_some_and(|g| g.ends_with("#extracted")) {
                Provenance::Extracted
            } else {
                Provenance::Curated
            };
            let label = labels
                .get(target)
                .map_or_else(|| local_name(target).to_string(), |(_, l)| l.clone());
            let link = Link {
                iri: target.clone(),
                label: label.clone(),
                provenance,
                weight: if provenance == Provenance::Curated {
                    1.0
                } else {
                    0.8
                },
            };
            let rel = rel.strip_prefix(vocab::TG).unwrap_or(rel);
            match rel {
                "performs" => t.verbs.push(link),
                "primaryEntity" => {
                    // Primary entities first, weighted highest.
                    t.entities.retain(|l| l.iri != link.iri);
                    t.entities.insert(
                        0,
                        Link {
                            weight: link.weight.max(1.0),
                            ..link
                        },
                    );
                }
                "actsOn" if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(link);
                }
                "mentions" if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(Link {
                        weight: 0.4,
                        ..link
                    });
                }
                "inDomain" => t.domains.push(link),
                "inCategory" => t.categories.push(link),
                "requiresIntegration" => t.integrations.push(link),
                "availableOnChannel" => t.channels.push(link),
                "dependsOn" => {
                    let key = (tool.clone(), target.clone());
                    let qualifiers = qualified.get(&key).cloned().unwrap_or_default();
                    t.depends_on.push(Dependency {
                        on: names.get(target).cloned().unwrap_or(label),
                        ..qualifiers
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Each tool's parameters, by tool IRI.
    fn params(&self) -> Result<HashMap<String, Vec<Param>>> {
        let mut params: HashMap<String, Vec<Param>> = HashMap::new();
        for row in self.select_fixed(Q_TOOL_PARAMS)? {
            let (Some(tool), Some(name)) = (row.get("tool"), row.get("name")) else {
                continue;
            };
            params.entry(tool.clone()).or_default().push(Param {
                name: name.clone(),
                description: row.get("description").cloned().unwrap_or_default(),
                ty: row.get("type").cloned(),
                required: parse_bool(row.get("required")).unwrap_or(false),
                entity: row.get("entity").cloned(),
            });
        }
        Ok(params)
    }

    /// Each tool's source: the smallest of the sources that describe it.
    fn attach_sources(&self, tools: &mut BTreeMap<String, Tool>) -> Result<()> {
        for row in self.select_fixed(Q_TOOL_SOURCES)? {
            let (Some(tool), Some(g)) = (row.get("tool"), row.get("g")) else {
                continue;
            };
            let (Some(t), Some(name)) = (tools.get_mut(tool), source_name(g)) else {
                continue;
            };
            if t.source.is_empty() || name < t.source {
                t.source = name;
            }
        }
        Ok(())
    }
}

/// The tools in name order, their parameters canonical and their links
/// deduplicated.
fn finish(tools: BTreeMap<String, Tool>, mut params: HashMap<String, Vec<Param>>) -> Vec<Tool> {
    let mut out: Vec<Tool> = tools.into_values().collect();
    for t in &mut out {
        if let Some(ps) = params.remove(&t.iri) {
            t.params = Param::canonical(ps);
        }
        t.verbs.dedup_by(|a, b| a.iri == b.iri);
        t.domains.dedup_by(|a, b| a.iri == b.iri);
        t.categories.dedup_by(|a, b| a.iri == b.iri);
        t.depends_on.sort();
        t.depends_on.dedup_by(|a, b| a.on == b.on);
        for links in [&mut t.integrations, &mut t.channels] {
            links.sort_by(|a, b| a.iri.cmp(&b.iri));
            links.dedup_by(|a, b| a.iri == b.iri);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name).then(a.iri.cmp(&b.iri)));
    out
}
