//! Caller scope: one layered policy filter that fixes, before anything is
//! ranked, which tools a caller may see.
//!
//! Layers, in order, deny always wins:
//! 1. **platform**: the allowed list (empty = every tool), the blocked list;
//! 2. **organization**: enabled list (empty = all), disabled list, and every
//!    tool that needs an integration the organization has not connected;
//! 3. **agent**: its profile (explicit, else its subtype's default), enabled
//!    and disabled lists, name deny patterns (`*_delete`), `draft_only`
//!    autonomy (read-only tools only); `requires approval` tools stay, flagged;
//! 4. **session**: tools that failed earlier in the session, and the channel
//!    (a tool with `tg:availableOnChannel` only on its channels);
//! 5. universal tools come back after the agent and session layers (the
//!    platform and the organization still decide for them);
//! 6. **goal**: the verbs in its operations (through `skos:broader`) and not
//!    excluded, acting on its entities or categories, plus its own tools.
//!
//! Live [`limits::Limits`] (usage policies of airlock-approved tools, tools
//! switched off by failed health checks) are judged in the same layers: a
//! switched-off tool at the platform, an access grant, a rate limit or a
//! budget at the organization (per organization), an agent grant at the
//! agent.
//!
//! A request without a caller is judged by the platform layer alone. The
//! data lives in the graph (`seeds/policy.ttl`, profiles and subtypes in
//! `seeds/platform.ttl`, goals in `seeds/goals.ttl`); [`Policy`] turns it
//! into bitsets over one snapshot's tools when the snapshot is built, so a
//! request costs a few word-wise ANDs. [`Policy::explain`] gives each
//! layer's verdict and reason for one tool.

pub(crate) mod data;
mod goal;
mod goals;
pub mod limits;
mod reason;
mod verdicts;

pub use goals::{GoalHint, GoalInfo};
use verdicts::{agent_verdict, org_verdict};

use crate::catalog::Catalog;
use crate::error::{Error, Field, Result};
use crate::model::PolicyFact;
use crate::scope::Scope;
use crate::vocab;
use data::{Agent, Goal, Org, PolicyData};
use limits::Limits;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Who is asking. Every field is optional: a request without a caller is
/// judged by the platform layer alone. Names are local names (`acme`), labels
/// or IRIs. One definition for the JSON of requests, the query parameters of
/// listings and the command line's flags.
#[derive(
    Debug,
    Clone,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    utoipa::IntoParams,
    clap::Args,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct Caller {
    /// The organization (`acme`); implied by the agent when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub org: Option<String>,
    /// The agent (`acme_support`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub agent: Option<String>,
    /// The conversation: tools that failed in it are hidden, and domain
    /// selection remembers what it talked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub session: Option<String>,
    /// The channel the conversation runs on (`sms`, `voice`, `web`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub channel: Option<String>,
    /// A goal (`BOOK_APPOINTMENT`) that narrows the tools to its boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub goal: Option<String>,
    /// The key the request came with (its name), set by the server, never
    /// read from a request: a conversation belongs to the key, organization
    /// and agent that started it.
    #[serde(skip)]
    #[arg(skip)]
    pub key: Option<String>,
}

/// The longest name a caller field may carry (bytes).
pub const MAX_NAME: usize = 256;

impl Caller {
    /// Every field is a name, not a document: at most [`MAX_NAME`] bytes
    /// (a session id is a key of the sessions table; an org or agent is
    /// looked up and may end up in a message).
    pub fn check(&self) -> Result<()> {
        for (value, field) in [
            (&self.org, Field::CallerOrg),
            (&self.agent, Field::CallerAgent),
            (&self.session, Field::CallerSession),
            (&self.channel, Field::CallerChannel),
            (&self.goal, Field::CallerGoal),
        ] {
            if value.as_ref().is_some_and(|v| v.len() > MAX_NAME) {
                return Err(Error::invalid_field(
                    field,
                    format!("at most {MAX_NAME} bytes"),
                ));
            }
        }
        Ok(())
    }

    /// True when nothing identifies the caller (platform layer only).
    pub fn is_anonymous(&self) -> bool {
        self.org.is_none()
            && self.agent.is_none()
            && self.session.is_none()
            && self.channel.is_none()
            && self.goal.is_none()
    }
}

/// A policy layer.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Platform,
    Organization,
    Agent,
    Session,
    Goal,
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layer::Platform => "platform",
            Layer::Organization => "organization",
            Layer::Agent => "agent",
            Layer::Session => "session",
            Layer::Goal => "goal",
        })
    }
}

/// A tool the caller's goal names that a layer removed: said, never dropped
/// silently. A tool the caller could see without its goal, its session
/// and its limits is named with the layer and reason; tools hidden from the
/// caller anyway become one warning that names none of them and no count
/// (a hidden tool looks like a missing one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Warning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<Layer>,
    pub reason: String,
}

/// One layer's verdict on one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LayerVerdict {
    pub layer: Layer,
    /// False when the caller gives nothing this layer judges (no agent…).
    pub applies: bool,
    pub allowed: bool,
    pub reason: String,
}

/// Why a caller may or may not see one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Explanation {
    pub tool: String,
    pub allowed: bool,
    pub requires_approval: bool,
    /// The layer whose verdict stands: the first that removed the tool, else
    /// the last that applied.
    pub deciding: Layer,
    pub layers: Vec<LayerVerdict>,
}

/// A caller's view of one snapshot.
#[derive(Debug, Clone)]
pub struct Access {
    /// The tools the caller may see.
    pub scope: Scope,
    /// Those it may see but must have approved before calling.
    pub approval: Scope,
    /// Tools its goal names that a layer removed.
    pub warnings: Vec<Warning>,
    /// At most this many results under a goal.
    pub cap: Option<usize>,
    /// Tools the caller's goal favours: (index, factor, why).
    pub boosts: Vec<(usize, f32, String)>,
    /// How the caller's organization chooses a turn's tools
    /// (`tg:selectionStrategy`), when it says.
    pub strategy: Option<String>,
}

/// Results under a goal are capped at this many by default.
pub const GOAL_RESULTS: usize = 20;

/// The caller, looked up in the policy data.
struct Who<'a> {
    org: Option<&'a Org>,
    agent: Option<&'a Agent>,
    channel: Option<&'a str>,
    goal: Option<&'a Goal>,
    /// Tools that failed in this session, with why.
    failed: &'a [(String, String)],
    /// Usage policies and switched-off tools, judged at `now`.
    limits: &'a Limits,
    now: u64,
}

/// The policy of one snapshot: its data and bitsets over the snapshot's tools.
#[derive(Debug, Clone, Default)]
pub(crate) struct Policy {
    pub(crate) data: PolicyData,
    platform: Scope,
    universal: Scope,
    orgs: HashMap<String, Scope>,
    agents: HashMap<String, Scope>,
    channels: HashMap<String, Scope>,
    goals: HashMap<String, Scope>,
    /// Per goal, the tools it favours: (index, factor, why).
    boosts: HashMap<String, Vec<(usize, f32, String)>>,
}

impl Policy {
    /// Reads the policy facts and computes the masks over `catalog`'s tools.
    pub fn build(catalog: &Catalog, facts: &[PolicyFact]) -> Self {
        let data = PolicyData::from_facts(facts);
        let n = catalog.tools().len();
        let platform = Scope::of(
            n,
            (0..n).filter(|&i| verdicts::platform_verdict(&data, &catalog.tools()[i]).is_ok()),
        );
        let universal = Scope::of(n, (0..n).filter(|&i| catalog.tools()[i].universal));
        let mut policy = Policy {
            platform,
            universal,
            ..Policy::default()
        };
        let orgs = data
            .orgs
            .values()
            .map(|o| (o.iri.clone(), policy.org_mask(catalog, o)))
            .collect();
        let agents = data
            .agents
            .values()
            .map(|a| (a.iri.clone(), policy.agent_mask(catalog, &data, a)))
            .collect();
        let channels = data
            .channels
            .iter()
            .map(|c| {
                let usable = (0..n)
                    .filter(|&i| verdicts::channel_verdict(&data, &catalog.tools()[i], c).is_ok());
                (c.clone(), Scope::of(n, usable))
            })
            .collect();
        let goals = data
            .goals
            .values()
            .map(|g| {
                let mut mask =
                    Scope::of(n, (0..n).filter(|&i| goal::verdict(catalog, g, i).is_ok()));
                mask.union(&policy.universal);
                (g.iri.clone(), mask)
            })
            .collect();
        let boosts = data
            .goals
            .values()
            .map(|g| {
                let favoured = (0..n)
                    .filter_map(|i| goal::boost(catalog, g, i).map(|(f, why)| (i, f, why)))
                    .collect();
                (g.iri.clone(), favoured)
            })
            .collect();
        policy.orgs = orgs;
        policy.agents = agents;
        policy.channels = channels;
        policy.goals = goals;
        policy.boosts = boosts;
        policy.data = data;
        policy
    }

    fn org_mask(&self, catalog: &Catalog, org: &Org) -> Scope {
        let n = catalog.tools().len();
        Scope::of(n, (0..n).filter(|&i| org_verdict(catalog, org, i).is_ok()))
    }

    fn agent_mask(&self, catalog: &Catalog, data: &PolicyData, agent: &Agent) -> Scope {
        let n = catalog.tools().len();
        Scope::of(
            n,
            (0..n).filter(|&i| agent_verdict(catalog, data, agent, i).is_ok()),
        )
    }

    /// Finds a policy node by IRI, local name or label.
    fn find<'a, T>(
        &'a self,
        map: &'a std::collections::BTreeMap<String, T>,
        key: &str,
    ) -> Option<&'a T> {
        map.get(key).or_else(|| {
            let k = vocab::squash(key);
            map.iter()
                .find(|(iri, _)| {
                    vocab::squash(vocab::local_name(iri)) == k
                        || self
                            .data
                            .labels
                            .get(*iri)
                            .is_some_and(|l| vocab::squash(l) == k)
                })
                .map(|(_, v)| v)
        })
    }

    /// The IRI of an organization named by IRI, local name or label.
    pub fn org_iri(&self, name: &str) -> Option<&str> {
        self.find(&self.data.orgs, name).map(|o| o.iri.as_str())
    }

    /// The IRI of an agent named by IRI, local name or label.
    pub fn agent_iri(&self, name: &str) -> Option<&str> {
        self.find(&self.data.agents, name).map(|a| a.iri.as_str())
    }

    fn who<'a>(
        &'a self,
        caller: &Caller,
        failed: &'a [(String, String)],
        limits: &'a Limits,
        now: u64,
    ) -> Result<Who<'a>> {
        let org = match &caller.org {
            Some(o) => Some(self.find(&self.data.orgs, o).ok_or_else(|| {
                Error::invalid_field(Field::CallerOrg, format!("no organization named `{o}`"))
            })?),
            None => None,
        };
        // Inside an organization, another organization's agent is answered
        // exactly like one that does not exist (finding L4: "does not belong
        // to" told an org-bound key which agents other tenants have).
        let agent = match &caller.agent {
            Some(a) => Some(
                self.find(&self.data.agents, a)
                    .filter(|found| {
                        org.is_none_or(|o| found.org.as_deref() == Some(o.iri.as_str()))
                    })
                    .ok_or_else(|| {
                        let within = org.map_or(String::new(), |o| {
                            format!(" in organization `{}`", vocab::local_name(&o.iri))
                        });
                        Error::invalid_field(
                            Field::CallerAgent,
                            format!("no agent named `{a}`{within}"),
                        )
                    })?,
            ),
            None => None,
        };
        let org = org.or_else(|| {
            agent
                .and_then(|a| a.org.as_ref())
                .and_then(|o| self.data.orgs.get(o))
        });
        let channel = match &caller.channel {
            Some(c) => {
                let k = vocab::squash(c);
                let found = self.data.channels.iter().find(|iri| {
                    **iri == *c
                        || vocab::squash(vocab::local_name(iri)) == k
                        || self
                            .data
                            .labels
                            .get(*iri)
                            .is_some_and(|l| vocab::squash(l) == k)
                });
                Some(found.map(String::as_str).ok_or_else(|| {
                    Error::invalid_field(Field::CallerChannel, format!("no channel named `{c}`"))
                })?)
            }
            None => None,
        };
        let goal = match &caller.goal {
            Some(g) => Some(self.find(&self.data.goals, g).ok_or_else(|| {
                Error::invalid_field(Field::CallerGoal, format!("no goal named `{g}`"))
            })?),
            None => None,
        };
        Ok(Who {
            org,
            agent,
            channel,
            goal,
            failed: if caller.session.is_some() {
                failed
            } else {
                &[]
            },
            limits,
            now,
        })
    }

    /// The agent and channel layers, with the session's failures when
    /// `session`; universal tools are restored after them.
    fn person(&self, catalog: &Catalog, who: &Who<'_>, session: bool) -> Scope {
        let mut person = Scope::all(catalog.tools().len());
        if let Some(a) = who.agent
            && let Some(mask) = self.agents.get(&a.iri)
        {
            person.intersect(mask);
        }
        if let Some(c) = who.channel
            && let Some(mask) = self.channels.get(c)
        {
            person.intersect(mask);
        }
        if session {
            for (name, _) in who.failed {
                if let Some(i) = catalog.find(name) {
                    person.remove(i);
                }
            }
        }
        person.union(&self.universal);
        person
    }

    /// Removes the tools a live limit refuses to this caller.
    fn apply_limits(catalog: &Catalog, scope: &mut Scope, who: &Who<'_>) {
        if who.limits.is_empty() {
            return;
        }
        let org = who.org.map(|o| o.iri.as_str());
        let agent = who.agent.map(|a| a.iri.as_str());
        for tool in who.limits.tools() {
            if let Some(i) = catalog.find(tool)
                && scope.contains(i)
                && who.limits.verdict(tool, org, agent, who.now).is_err()
            {
                scope.remove(i);
            }
        }
    }

    /// The tools `caller` may see in `catalog` (the snapshot this policy was
    /// built on). `failed`: tools that failed earlier in the caller's session.
    pub fn resolve(
        &self,
        catalog: &Catalog,
        caller: &Caller,
        failed: &[(String, String)],
        limits: &Limits,
        now: u64,
    ) -> Result<Access> {
        let n = catalog.tools().len();
        if caller.is_anonymous() {
            let mut scope = self.platform.clone();
            let who = Who {
                org: None,
                agent: None,
                channel: None,
                goal: None,
                failed: &[],
                limits,
                now,
            };
            Self::apply_limits(catalog, &mut scope, &who);
            return Ok(Access {
                scope,
                approval: Scope::none(n),
                warnings: Vec::new(),
                cap: None,
                boosts: Vec::new(),
                strategy: None,
            });
        }
        let who = self.who(caller, failed, limits, now)?;
        let mut scope = self.platform.clone();
        if let Some(o) = who.org
            && let Some(mask) = self.orgs.get(&o.iri)
        {
            scope.intersect(mask);
        }
        // What the caller may see by who it is (no session, no counted
        // limits, no goal): the tools a goal warning may name.
        let mut seen = scope.clone();
        seen.intersect(&self.person(catalog, &who, false));
        let grants = who.limits.grants();
        Self::apply_limits(
            catalog,
            &mut seen,
            &Who {
                limits: &grants,
                ..who
            },
        );
        scope.intersect(&self.person(catalog, &who, true));
        Self::apply_limits(catalog, &mut scope, &who);
        let mut warnings = Vec::new();
        let mut boosts = Vec::new();
        if let Some(g) = who.goal
            && let Some(mask) = self.goals.get(&g.iri)
        {
            scope.intersect(mask);
            warnings = self.goal_warnings(catalog, &who, g, &scope, &seen);
            boosts = self
                .boosts
                .get(&g.iri)
                .into_iter()
                .flatten()
                .filter(|(i, _, _)| scope.contains(*i))
                .cloned()
                .collect();
        }
        let mut approval = Scope::of(
            n,
            who.agent
                .into_iter()
                .flat_map(|a| &a.approval)
                .filter_map(|t| catalog.iri_index(t)),
        );
        approval.intersect(&scope);
        Ok(Access {
            scope,
            approval,
            warnings,
            cap: who.goal.map(|_| GOAL_RESULTS),
            boosts,
            strategy: who.org.and_then(|o| o.strategy.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_patterns_glob_tool_names() {
        let glob = |pattern: &str, name: &str| {
            let mut d = data::DenyPatterns::default();
            d.push(pattern.to_string());
            d.matching(name).is_some()
        };
        assert!(glob("*_delete", "todo_delete"));
        assert!(glob("*_DELETE", "todo_delete"));
        assert!(!glob("*_delete", "todo_delete_all"));
        assert!(glob("*delete*", "todo_delete_all"));
        assert!(glob("task_?et", "task_get"));
        assert!(glob("*", ""));
        assert!(!glob("a*b", "ac"));
        assert!(glob("a*b*c", "aXbYbZc"));
        let mut two = data::DenyPatterns::default();
        two.push("[unclosed".into());
        two.push("*_remove".into());
        assert_eq!(two.matching("file_remove"), Some("*_remove"));
    }

    #[test]
    fn caller_rejects_unknown_fields() {
        let err = serde_json::from_str::<Caller>(r#"{"orgg": "acme"}"#).unwrap_err();
        assert!(err.to_string().contains("orgg"), "{err}");
        assert!(Caller::default().is_anonymous());
    }
}
