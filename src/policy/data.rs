//! The policy as written in the graph (`seeds/policy.ttl`, `seeds/goals.ttl`,
//! `seeds/intents.ttl`, profiles and subtypes in `seeds/platform.ttl`),
//! read from the store's facts into plain structs keyed by IRI.

use crate::model::PolicyFact;
use crate::vocab::{self, tg};
use std::collections::BTreeMap;

/// A tool IRI with the reason it was listed, when the data gives one.
pub(crate) type Listed = Vec<(String, Option<String>)>;

#[derive(Debug, Clone, Default)]
pub(crate) struct Platform {
    pub allowed: Vec<String>,
    pub blocked: Listed,
    /// The profile of an agent that names none and whose subtype has no
    /// default (`tg:defaultProfile` on the platform node; the seeds say
    /// `general`, as the design's migration default does).
    pub default_profile: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Org {
    pub iri: String,
    /// How its conversations choose tools (`tg:selectionStrategy`:
    /// `domains` or `intents`); none: the request's, else domains.
    pub strategy: Option<String>,
    pub enabled: Vec<String>,
    pub disabled: Listed,
    pub integrations: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Agent {
    pub iri: String,
    pub org: Option<String>,
    pub subtype: Option<String>,
    pub profile: Option<String>,
    pub enabled: Vec<String>,
    pub disabled: Listed,
    pub deny_patterns: DenyPatterns,
    pub draft_only: bool,
    pub approval: Vec<String>,
}

/// An agent's deny patterns over tool names (`*_delete`), as written and
/// compiled once (globset, ASCII case-insensitive).
#[derive(Debug, Clone)]
pub(crate) struct DenyPatterns {
    patterns: Vec<String>,
    /// The patterns that compiled, by their place in `set`.
    compiled: Vec<usize>,
    set: globset::GlobSet,
}

impl Default for DenyPatterns {
    fn default() -> Self {
        Self {
            patterns: Vec::new(),
            compiled: Vec::new(),
            set: globset::GlobSet::empty(),
        }
    }
}

impl DenyPatterns {
    /// Adds a pattern (one that does not compile is left out, said in the
    /// log: `toolgraph validate` reports it).
    pub fn push(&mut self, pattern: String) {
        self.patterns.push(pattern);
        let mut set = globset::GlobSetBuilder::new();
        self.compiled.clear();
        for (i, p) in self.patterns.iter().enumerate() {
            match globset::GlobBuilder::new(p).case_insensitive(true).build() {
                Ok(g) => {
                    set.add(g);
                    self.compiled.push(i);
                }
                Err(e) => tracing::warn!(pattern = %p, error = %e,
                    "a deny pattern that does not compile is ignored"),
            }
        }
        self.set = set.build().unwrap_or_else(|_| globset::GlobSet::empty());
    }

    /// The first pattern `name` matches.
    pub fn matching(&self, name: &str) -> Option<&str> {
        let first = self.set.matches(name).into_iter().min()?;
        let i = *self.compiled.get(first)?;
        self.patterns.get(i).map(String::as_str)
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Profile {
    pub categories: Vec<String>,
    pub tools: Vec<String>,
    pub read_only_only: bool,
    /// Every tool (`tg:includesAllTools true`: the design's `admin` = `*`).
    pub all: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Goal {
    pub iri: String,
    pub operations: Vec<String>,
    pub excluded: Vec<String>,
    pub entities: Vec<String>,
    pub categories: Vec<String>,
    pub tools: Vec<String>,
    /// Operations and entities that rank higher under the goal.
    pub favoured_operations: Vec<String>,
    pub favoured_entities: Vec<String>,
    pub order: Option<i64>,
    pub next: Vec<String>,
    pub primary_agent: Option<String>,
    pub fallback_agent: Option<String>,
    pub comment: Option<String>,
}

impl Goal {
    /// One fact about the goal (`p`: the property's local name).
    fn read(&mut self, p: &str, v: String, property: &str) {
        match p {
            "allowsOperation" => self.operations.push(v),
            "excludesOperation" => self.excluded.push(v),
            "allowsEntity" => self.entities.push(v),
            "allowsCategory" => self.categories.push(v),
            "availableTool" => self.tools.push(v),
            "favoursOperation" => self.favoured_operations.push(v),
            "favoursEntity" => self.favoured_entities.push(v),
            "order" => self.order = v.parse().ok(),
            "nextGoal" => self.next.push(v),
            "primaryAgent" => self.primary_agent = Some(v),
            "fallbackAgent" => self.fallback_agent = Some(v),
            _ if property == vocab::RDFS_COMMENT => self.comment = Some(v),
            _ => {}
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Intent {
    pub iri: String,
    pub keywords: Vec<String>,
    pub tools: Vec<String>,
    pub categories: Vec<String>,
}

/// Everything the policy facts say, keyed by node IRI (sorted: deterministic).
#[derive(Debug, Clone, Default)]
pub(crate) struct PolicyData {
    pub platform: Platform,
    pub orgs: BTreeMap<String, Org>,
    pub agents: BTreeMap<String, Agent>,
    pub profiles: BTreeMap<String, Profile>,
    /// Agent subtype -> its default profile.
    pub subtypes: BTreeMap<String, String>,
    pub goals: BTreeMap<String, Goal>,
    pub intents: BTreeMap<String, Intent>,
    /// Declared channels.
    pub channels: Vec<String>,
    /// Tools a channel cannot carry (`chan:sms tg:blocks [ tg:tool …;
    /// tg:reason … ]`), by channel IRI.
    pub channel_blocks: BTreeMap<String, Listed>,
    /// Preferred labels of every policy node.
    pub labels: BTreeMap<String, String>,
}

fn local(iri: &str) -> &str {
    iri.strip_prefix(vocab::TG).unwrap_or(iri)
}

impl PolicyData {
    /// A policy node's preferred label (its local name without one).
    pub fn label<'a>(&'a self, iri: &'a str) -> &'a str {
        self.labels
            .get(iri)
            .map_or_else(|| vocab::local_name(iri), String::as_str)
    }

    pub fn from_facts(facts: &[PolicyFact]) -> Self {
        let mut d = PolicyData::default();
        for f in facts {
            if f.property == vocab::SKOS_PREF_LABEL {
                d.labels.insert(f.subject.clone(), f.value.clone());
            }
            let (p, v) = (local(&f.property), f.value.clone());
            let listed = || (f.value.clone(), f.reason.clone());
            match f.class.as_str() {
                tg::PLATFORM => match p {
                    "allowsTool" => d.platform.allowed.push(v),
                    "blocksTool" => d.platform.blocked.push(listed()),
                    "defaultProfile" => d.platform.default_profile = Some(v),
                    _ => {}
                },
                tg::ORGANIZATION => {
                    let o = d.orgs.entry(f.subject.clone()).or_insert_with(|| Org {
                        iri: f.subject.clone(),
                        ..Org::default()
                    });
                    match p {
                        "enablesTool" => o.enabled.push(v),
                        "disablesTool" => o.disabled.push(listed()),
                        "connectedIntegration" => o.integrations.push(v),
                        "selectionStrategy" => o.strategy = Some(v.to_lowercase()),
                        _ => {}
                    }
                }
                tg::AGENT => {
                    let a = d.agents.entry(f.subject.clone()).or_insert_with(|| Agent {
                        iri: f.subject.clone(),
                        ..Agent::default()
                    });
                    match p {
                        "memberOf" => a.org = Some(v),
                        "subtype" => a.subtype = Some(v),
                        "profile" => a.profile = Some(v),
                        "enablesTool" => a.enabled.push(v),
                        "disablesTool" => a.disabled.push(listed()),
                        "denyPattern" => a.deny_patterns.push(v),
                        "autonomy" => a.draft_only = v == "draft_only",
                        "requiresApprovalFor" => a.approval.push(v),
                        _ => {}
                    }
                }
                tg::PROFILE => {
                    let pr = d.profiles.entry(f.subject.clone()).or_default();
                    match p {
                        "includesCategory" => pr.categories.push(v),
                        "includesTool" => pr.tools.push(v),
                        "readOnlyOnly" => pr.read_only_only = v == "true" || v == "1",
                        "includesAllTools" => pr.all = v == "true" || v == "1",
                        _ => {}
                    }
                }
                tg::AGENT_SUBTYPE if p == "defaultProfile" => {
                    d.subtypes.insert(f.subject.clone(), v);
                }
                tg::GOAL => {
                    let g = d.goals.entry(f.subject.clone()).or_insert_with(|| Goal {
                        iri: f.subject.clone(),
                        ..Goal::default()
                    });
                    g.read(p, v, &f.property);
                }
                tg::INTENT => {
                    let i = d
                        .intents
                        .entry(f.subject.clone())
                        .or_insert_with(|| Intent {
                            iri: f.subject.clone(),
                            ..Intent::default()
                        });
                    match p {
                        "keyword" => i.keywords.push(v.to_lowercase()),
                        "intentTool" => i.tools.push(v),
                        "intentCategory" => i.categories.push(v),
                        _ => {}
                    }
                }
                tg::CHANNEL => {
                    if d.channels.last() != Some(&f.subject) {
                        d.channels.push(f.subject.clone());
                    }
                    if p == "blocksTool" {
                        d.channel_blocks
                            .entry(f.subject.clone())
                            .or_default()
                            .push(listed());
                    }
                }
                _ => {}
            }
        }
        d
    }
}
