//! Each layer's verdict on one tool, defined once: `Policy::build` keeps
//! the tools a verdict keeps (the masks `resolve` intersects), `explain`
//! writes its reason out (what `policy explain` shows and goal warnings
//! say).

use super::data::{Agent, Goal, Org, PolicyData};
use super::reason::{Reason, Verdict, text};
use super::{Caller, Explanation, Layer, LayerVerdict, Policy, Warning, Who, goal};
use crate::catalog::Catalog;
use crate::error::Result;
use crate::model::{Provenance, Tool};
use crate::policy::limits::Limits;
use crate::scope::Scope;
use crate::vocab;

impl Policy {
    /// What a goal's own tools that left `scope` tell the caller: each one
    /// it could see by who it is (`seen`) by name, layer and reason; the
    /// others as one warning naming none of them, without a count.
    pub(super) fn goal_warnings(
        &self,
        catalog: &Catalog,
        who: &Who<'_>,
        goal: &Goal,
        scope: &Scope,
        seen: &Scope,
    ) -> Vec<Warning> {
        let mut out = Vec::new();
        let mut hidden = false;
        for t in &goal.tools {
            let Some(i) = catalog.iri_index(t) else {
                continue;
            };
            if scope.contains(i) {
                continue;
            }
            if !seen.contains(i) {
                hidden = true;
                continue;
            }
            let e = self.explain_with(catalog, who, i);
            if let Some(v) = e.layers.iter().find(|v| v.applies && !v.allowed) {
                out.push(Warning {
                    tool: Some(e.tool.clone()),
                    layer: Some(v.layer),
                    reason: v.reason.clone(),
                });
            }
        }
        if hidden {
            out.push(Warning {
                tool: None,
                layer: None,
                reason: format!(
                    "goal {} names one or more tools that are not available to this caller",
                    vocab::local_name(&goal.iri)
                ),
            });
        }
        out
    }

    /// Each layer's verdict on one tool for `caller`, and the deciding one.
    pub fn explain(
        &self,
        catalog: &Catalog,
        caller: &Caller,
        failed: &[(String, String)],
        limits: &Limits,
        now: u64,
        idx: usize,
    ) -> Result<Explanation> {
        let who = self.who(caller, failed, limits, now)?;
        Ok(self.explain_with(catalog, &who, idx))
    }

    pub(super) fn explain_with(&self, catalog: &Catalog, who: &Who<'_>, idx: usize) -> Explanation {
        let tool = &catalog.tools()[idx];
        let verdict = |layer, applies, r: std::result::Result<String, String>| {
            let allowed = r.is_ok();
            LayerVerdict {
                layer,
                applies,
                allowed,
                reason: r.unwrap_or_else(|e| e),
            }
        };
        let live_org =
            who.limits
                .organization(&tool.name, who.org.map(|o| o.iri.as_str()), who.now);
        let live_agent = who
            .limits
            .agent(&tool.name, who.agent.map(|a| a.iri.as_str()));
        let mut layers = vec![verdict(
            Layer::Platform,
            true,
            text(platform_verdict(&self.data, tool))
                .and_then(|ok| who.limits.platform(&tool.name).map(|()| ok)),
        )];
        layers.push(match who.org {
            Some(o) => verdict(
                Layer::Organization,
                true,
                text(org_verdict(catalog, o, idx)).and_then(|ok| live_org.map(|()| ok)),
            ),
            None => match live_org {
                Err(e) => verdict(Layer::Organization, true, Err(e)),
                Ok(()) => verdict(
                    Layer::Organization,
                    false,
                    Ok("no organization given".into()),
                ),
            },
        });
        let restore = |r: std::result::Result<String, String>| match r {
            Err(e) if tool.universal => Ok(format!(
                "universal tool: kept although {e} (only the platform or the organization can remove it)"
            )),
            other => other,
        };
        layers.push(match who.agent {
            Some(a) => verdict(
                Layer::Agent,
                true,
                restore(text(agent_verdict(catalog, &self.data, a, idx)))
                    .and_then(|ok| live_agent.map(|()| ok)),
            ),
            None => match live_agent {
                Err(e) => verdict(Layer::Agent, true, Err(e)),
                Ok(()) => verdict(Layer::Agent, false, Ok("no agent given".into())),
            },
        });
        let session = text(session_verdict(&self.data, tool, who));
        let applies = who.channel.is_some() || !who.failed.is_empty();
        layers.push(verdict(Layer::Session, applies, restore(session)));
        layers.push(match who.goal {
            Some(g) if tool.universal => verdict(
                Layer::Goal,
                true,
                Ok(format!(
                    "universal tool: available under every goal, {}",
                    self.data.label(&g.iri)
                )),
            ),
            Some(g) => verdict(Layer::Goal, true, text(goal::verdict(catalog, g, idx))),
            None => verdict(Layer::Goal, false, Ok("no goal given".into())),
        });
        let allowed = layers.iter().all(|v| v.allowed);
        let deciding = layers
            .iter()
            .find(|v| !v.allowed)
            .or_else(|| layers.iter().rev().find(|v| v.applies))
            .map_or(Layer::Platform, |v| v.layer);
        let requires_approval =
            allowed && who.agent.is_some_and(|a| a.approval.contains(&tool.iri));
        Explanation {
            tool: tool.name.clone(),
            allowed,
            requires_approval,
            deciding,
            layers,
        }
    }
}

pub(super) fn platform_verdict<'a>(data: &'a PolicyData, tool: &Tool) -> Verdict<'a> {
    if !data.platform.allowed.is_empty() && !data.platform.allowed.contains(&tool.iri) {
        return Err(Reason::NotOnAllowedList);
    }
    if let Some((_, reason)) = data.platform.blocked.iter().find(|(t, _)| *t == tool.iri) {
        return Err(Reason::PlatformBlocked(reason.as_deref()));
    }
    Ok(Reason::PlatformAllows)
}

pub(super) fn org_verdict<'a>(catalog: &'a Catalog, org: &'a Org, idx: usize) -> Verdict<'a> {
    let tool = &catalog.tools()[idx];
    let name = org.iri.as_str();
    if !org.enabled.is_empty() && !org.enabled.contains(&tool.iri) {
        return Err(Reason::NotEnabledForOrg(name));
    }
    if let Some((_, reason)) = org.disabled.iter().find(|(t, _)| *t == tool.iri) {
        return Err(Reason::OrgDisabled(name, reason.as_deref()));
    }
    if let Some(missing) = tool
        .integrations
        .iter()
        .find(|l| !org.integrations.iter().any(|i| **i == *l.iri))
    {
        return Err(Reason::NeedsIntegration(&missing.label, name));
    }
    Ok(Reason::OrgAllows(name))
}

pub(super) fn agent_verdict<'a>(
    catalog: &'a Catalog,
    data: &'a PolicyData,
    agent: &'a Agent,
    idx: usize,
) -> Verdict<'a> {
    let tool = &catalog.tools()[idx];
    let name = agent.iri.as_str();
    let (profile_iri, how) = agent_profile(data, agent);
    let mut inferred = None;
    if let Some(p) = profile_iri {
        let profile = data.profiles.get(p);
        let whole = profile.is_some_and(|pr| pr.all || pr.tools.contains(&tool.iri));
        let by_category = profile.and_then(|pr| {
            tool.categories
                .iter()
                .find(|c| pr.categories.iter().any(|p| **p == *c.iri))
        });
        if !whole && by_category.is_none() {
            return Err(Reason::NotInProfile {
                profile: p,
                how,
                agent: name,
            });
        }
        if profile.is_some_and(|pr| pr.read_only_only) && !tool.read_only {
            return Err(Reason::ProfileReadOnly(p));
        }
        if !whole {
            inferred = by_category
                .filter(|c| c.provenance == Provenance::Extracted)
                .map(|c| &*c.label);
        }
    }
    if !agent.enabled.is_empty() && !agent.enabled.contains(&tool.iri) {
        return Err(Reason::NotEnabledForAgent(name));
    }
    if let Some((_, reason)) = agent.disabled.iter().find(|(t, _)| *t == tool.iri) {
        return Err(Reason::AgentDisabled(name, reason.as_deref()));
    }
    if let Some(p) = agent.deny_patterns.matching(&tool.name) {
        return Err(Reason::DenyPattern(name, p));
    }
    if agent.draft_only && !tool.read_only {
        return Err(Reason::DraftOnly(name));
    }
    Ok(match profile_iri {
        Some(p) => Reason::InProfile {
            profile: p,
            how,
            agent: name,
            inferred,
        },
        None => Reason::AgentAllows(name),
    })
}

/// The profile that judges `agent`: its own, else its subtype's default,
/// else the platform's default (`general` in the seeds), with how it was
/// chosen (said in `policy explain`).
pub(super) fn agent_profile<'a>(
    data: &'a PolicyData,
    agent: &'a Agent,
) -> (Option<&'a String>, &'static str) {
    if let Some(p) = &agent.profile {
        return (Some(p), "");
    }
    if let Some(p) = agent.subtype.as_ref().and_then(|s| data.subtypes.get(s)) {
        return (Some(p), " (its subtype's default)");
    }
    match &data.platform.default_profile {
        Some(p) => (Some(p), " (the platform's default profile)"),
        None => (None, ""),
    }
}

/// The channel's verdict on one tool: the channel's own blocked list, then
/// the tool's own channel list (a tool with `tg:availableOnChannel` only on
/// those channels).
pub(super) fn channel_verdict<'a>(
    data: &'a PolicyData,
    tool: &'a Tool,
    channel: &'a str,
) -> Verdict<'a> {
    let label = data.label(channel);
    if let Some((_, reason)) = data
        .channel_blocks
        .get(channel)
        .and_then(|b| b.iter().find(|(t, _)| *t == tool.iri))
    {
        return Err(Reason::ChannelBlocks(label, reason.as_deref()));
    }
    if !tool.channels.is_empty() && !tool.channels.iter().any(|l| &*l.iri == channel) {
        return Err(Reason::OnlyOn(&tool.channels, label));
    }
    Ok(Reason::AvailableOn(label))
}

fn session_verdict<'a>(data: &'a PolicyData, tool: &'a Tool, who: &Who<'a>) -> Verdict<'a> {
    if let Some((_, why)) = who
        .failed
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&tool.name) || n.eq_ignore_ascii_case(&tool.id))
    {
        return Err(Reason::FailedInSession(why));
    }
    match who.channel {
        Some(c) => channel_verdict(data, tool, c),
        None => Ok(Reason::NoSessionRestriction),
    }
}
