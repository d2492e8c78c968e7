//! Why a layer keeps or removes a tool, as data. Each layer's verdict
//! function returns one, so the masks `resolve` intersects and the verdicts
//! `explain` shows come from the same definition; the text is written only
//! when a policy is explained (building the masks formats nothing).

use crate::model::Link;
use crate::vocab;
use std::fmt;

/// One layer's verdict: `Ok(why it stays)` or `Err(why it goes)`.
pub(super) type Verdict<'a> = Result<Reason<'a>, Reason<'a>>;

/// The verdict as `explain` shows it.
pub(super) fn text(v: Verdict<'_>) -> Result<String, String> {
    v.map(|r| r.to_string()).map_err(|r| r.to_string())
}

/// A reason, with the names it needs (IRIs are shown by local name).
#[derive(Debug, Clone)]
pub(super) enum Reason<'a> {
    // platform
    PlatformAllows,
    NotOnAllowedList,
    PlatformBlocked(Option<&'a str>),
    // organization
    OrgAllows(&'a str),
    NotEnabledForOrg(&'a str),
    OrgDisabled(&'a str, Option<&'a str>),
    /// (integration label, organization)
    NeedsIntegration(&'a str, &'a str),
    // agent
    AgentAllows(&'a str),
    InProfile {
        profile: &'a str,
        how: &'static str,
        agent: &'a str,
        /// The inferred category that put the tool in the profile.
        inferred: Option<&'a str>,
    },
    NotInProfile {
        profile: &'a str,
        how: &'static str,
        agent: &'a str,
    },
    ProfileReadOnly(&'a str),
    NotEnabledForAgent(&'a str),
    AgentDisabled(&'a str, Option<&'a str>),
    /// (agent, pattern)
    DenyPattern(&'a str, &'a str),
    DraftOnly(&'a str),
    // session
    NoSessionRestriction,
    FailedInSession(&'a str),
    /// (channel label)
    AvailableOn(&'a str),
    /// (channel label, why)
    ChannelBlocks(&'a str, Option<&'a str>),
    /// (the tool's channels, this conversation's channel label)
    OnlyOn(&'a [Link], &'a str),
    // goal
    VerbExcluded(&'a str, &'a str),
    VerbNotAmongOperations(&'a [Link], &'a str),
    NoEntityWithin(&'a str),
    CategoryNotWithin(&'a [Link], &'a str),
    WithinGoal {
        verb: &'a str,
        entity: Option<&'a str>,
        category: Option<&'a str>,
        goal: &'a str,
        listed: bool,
    },
}

fn labels(links: &[Link]) -> String {
    if links.is_empty() {
        "none".to_string()
    } else {
        links
            .iter()
            .map(|l| &*l.label)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = vocab::local_name;
        let given = |r: &Option<&str>| r.unwrap_or("no reason given").to_string();
        match self {
            Reason::PlatformAllows => write!(f, "the platform allows it"),
            Reason::NotOnAllowedList => write!(f, "not on the platform's allowed list"),
            Reason::PlatformBlocked(r) => write!(f, "blocked by the platform: {}", given(r)),
            Reason::OrgAllows(o) => write!(f, "organization {} allows it", n(o)),
            Reason::NotEnabledForOrg(o) => write!(f, "not enabled for organization {}", n(o)),
            Reason::OrgDisabled(o, r) => {
                write!(f, "disabled for organization {}: {}", n(o), given(r))
            }
            Reason::NeedsIntegration(i, o) => write!(
                f,
                "needs the {i} integration, which organization {} has not connected",
                n(o)
            ),
            Reason::AgentAllows(a) => write!(f, "agent {} allows it", n(a)),
            Reason::InProfile {
                profile,
                how,
                agent,
                inferred,
            } => {
                write!(f, "in profile {}{how} of agent {}", n(profile), n(agent))?;
                if let Some(c) = inferred {
                    write!(f, " (category {c}, inferred from the tools it resembles)")?;
                }
                Ok(())
            }
            Reason::NotInProfile {
                profile,
                how,
                agent,
            } => write!(
                f,
                "not in profile {}{how} of agent {}",
                n(profile),
                n(agent)
            ),
            Reason::ProfileReadOnly(p) => {
                write!(f, "profile {} allows read-only tools only", n(p))
            }
            Reason::NotEnabledForAgent(a) => write!(f, "not enabled for agent {}", n(a)),
            Reason::AgentDisabled(a, r) => {
                write!(f, "disabled for agent {}: {}", n(a), given(r))
            }
            Reason::DenyPattern(a, p) => write!(f, "matches agent {}'s deny pattern `{p}`", n(a)),
            Reason::DraftOnly(a) => {
                write!(f, "agent {} is draft_only: read-only tools only", n(a))
            }
            Reason::NoSessionRestriction => write!(f, "no session restriction"),
            Reason::FailedInSession(why) => write!(f, "failed earlier in this session: {why}"),
            Reason::AvailableOn(c) => write!(f, "available on {c}"),
            Reason::ChannelBlocks(c, r) => write!(f, "blocked on {c}: {}", given(r)),
            Reason::OnlyOn(on, c) => write!(
                f,
                "only available on {}; this conversation is on {c}",
                labels(on)
            ),
            Reason::VerbExcluded(v, g) => write!(f, "its verb {v} is excluded by goal {}", n(g)),
            Reason::VerbNotAmongOperations(verbs, g) => write!(
                f,
                "its verb ({}) is not among goal {}'s operations",
                labels(verbs),
                n(g)
            ),
            Reason::NoEntityWithin(g) => {
                write!(f, "it acts on nothing within goal {}'s entities", n(g))
            }
            Reason::CategoryNotWithin(cats, g) => write!(
                f,
                "its category ({}) is not among goal {}'s categories",
                labels(cats),
                n(g)
            ),
            Reason::WithinGoal {
                verb,
                entity,
                category,
                goal,
                listed,
            } => {
                write!(f, "{verb}")?;
                if let Some(e) = entity {
                    write!(f, " on {e}")?;
                }
                if let Some(c) = category {
                    write!(f, " in category {c}")?;
                }
                write!(f, " is within goal {}", n(goal))?;
                if *listed {
                    write!(f, " (goal {} lists it)", n(goal))?;
                }
                Ok(())
            }
        }
    }
}
