//! Each layer's verdict on one tool, with its reason: what `policy
//! explain` shows and what goal warnings say.

use super::data::{Agent, Goal, Org, PolicyData};
use super::{Caller, Explanation, Layer, LayerVerdict, Policy, Warning, Who, goal};
use crate::catalog::Catalog;
use crate::error::Result;
use crate::model::Provenance;
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
        let label = |iri: &str| {
            self.data
                .labels
                .get(iri)
                .cloned()
                .unwrap_or_else(|| vocab::local_name(iri).to_string())
        };
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
            platform_verdict(&self.data, tool)
                .and_then(|ok| who.limits.platform(&tool.name).map(|()| ok)),
        )];
        layers.push(match who.org {
            Some(o) => verdict(
                Layer::Organization,
                true,
                org_verdict(catalog, o, idx).and_then(|ok| live_org.map(|()| ok)),
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
                restore(agent_verdict(catalog, &self.data, a, idx))
                    .and_then(|ok| live_agent.map(|()| ok)),
            ),
            None => match live_agent {
                Err(e) => verdict(Layer::Agent, true, Err(e)),
                Ok(()) => verdict(Layer::Agent, false, Ok("no agent given".into())),
            },
        });
        let session = session_verdict(&self.data, tool, who, &label);
        let applies = who.channel.is_some() || !who.failed.is_empty();
        layers.push(verdict(Layer::Session, applies, restore(session)));
        layers.push(match who.goal {
            Some(g) if tool.universal => verdict(
                Layer::Goal,
                true,
                Ok(format!(
                    "universal tool: available under every goal, {}",
                    label(&g.iri)
                )),
            ),
            Some(g) => verdict(Layer::Goal, true, goal::verdict(catalog, g, idx)),
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

type Verdict = std::result::Result<String, String>;

pub(super) fn platform_verdict(data: &PolicyData, tool: &crate::model::Tool) -> Verdict {
    if !data.platform.allowed.is_empty() && !data.platform.allowed.contains(&tool.iri) {
        return Err("not on the platform's allowed list".into());
    }
    if let Some((_, reason)) = data.platform.blocked.iter().find(|(t, _)| *t == tool.iri) {
        return Err(format!(
            "blocked by the platform: {}",
            reason.as_deref().unwrap_or("no reason given")
        ));
    }
    Ok("the platform allows it".into())
}

pub(super) fn org_verdict(catalog: &Catalog, org: &Org, idx: usize) -> Verdict {
    let tool = &catalog.tools()[idx];
    let name = vocab::local_name(&org.iri);
    if !org.enabled.is_empty() && !org.enabled.contains(&tool.iri) {
        return Err(format!("not enabled for organization {name}"));
    }
    if let Some((_, reason)) = org.disabled.iter().find(|(t, _)| *t == tool.iri) {
        return Err(format!(
            "disabled for organization {name}: {}",
            reason.as_deref().unwrap_or("no reason given")
        ));
    }
    if let Some(missing) = tool
        .integrations
        .iter()
        .find(|l| !org.integrations.contains(&l.iri))
    {
        return Err(format!(
            "needs the {} integration, which organization {name} has not connected",
            missing.label
        ));
    }
    Ok(format!("organization {name} allows it"))
}

pub(super) fn agent_verdict(
    catalog: &Catalog,
    data: &PolicyData,
    agent: &Agent,
    idx: usize,
) -> Verdict {
    let tool = &catalog.tools()[idx];
    let name = vocab::local_name(&agent.iri);
    let (profile_iri, how) = agent_profile(data, agent);
    let mut inferred = String::new();
    if let Some(p) = profile_iri {
        let pname = vocab::local_name(p);
        let profile = data.profiles.get(p);
        let by_category = profile.and_then(|pr| {
            tool.categories
                .iter()
                .find(|c| pr.categories.contains(&c.iri))
        });
        let listed = profile.is_some_and(|pr| pr.all || pr.tools.contains(&tool.iri))
            || by_category.is_some();
        if !listed {
            return Err(format!("not in profile {pname}{how} of agent {name}"));
        }
        if let Some(c) = by_category.filter(|c| c.provenance == Provenance::Extracted)
            && !profile.is_some_and(|pr| pr.all || pr.tools.contains(&tool.iri))
        {
            inferred = format!(
                " (category {}, inferred from the tools it resembles)",
                c.label
            );
        }
        if profile.is_some_and(|pr| pr.read_only_only) && !tool.read_only {
            return Err(format!("profile {pname} allows read-only tools only"));
        }
    }
    if !agent.enabled.is_empty() && !agent.enabled.contains(&tool.iri) {
        return Err(format!("not enabled for agent {name}"));
    }
    if let Some((_, reason)) = agent.disabled.iter().find(|(t, _)| *t == tool.iri) {
        return Err(format!(
            "disabled for agent {name}: {}",
            reason.as_deref().unwrap_or("no reason given")
        ));
    }
    if let Some(p) = agent.deny_patterns.matching(&tool.name) {
        return Err(format!("matches agent {name}'s deny pattern `{p}`"));
    }
    if agent.draft_only && !tool.read_only {
        return Err(format!("agent {name} is draft_only: read-only tools only"));
    }
    Ok(match profile_iri {
        Some(p) => format!(
            "in profile {}{how} of agent {name}{inferred}",
            vocab::local_name(p)
        ),
        None => format!("agent {name} allows it"),
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
pub(super) fn channel_verdict(
    data: &PolicyData,
    tool: &crate::model::Tool,
    channel: &str,
    label: &dyn Fn(&str) -> String,
) -> Verdict {
    if let Some((_, reason)) = data
        .channel_blocks
        .get(channel)
        .and_then(|b| b.iter().find(|(t, _)| *t == tool.iri))
    {
        return Err(format!(
            "blocked on {}: {}",
            label(channel),
            reason.as_deref().unwrap_or("no reason given")
        ));
    }
    if !tool.channels.is_empty() && !tool.channels.iter().any(|l| l.iri == channel) {
        let on: Vec<&str> = tool.channels.iter().map(|l| l.label.as_str()).collect();
        return Err(format!(
            "only available on {}; this conversation is on {}",
            on.join(", "),
            label(channel)
        ));
    }
    Ok(format!("available on {}", label(channel)))
}

fn session_verdict(
    data: &PolicyData,
    tool: &crate::model::Tool,
    who: &Who<'_>,
    label: &dyn Fn(&str) -> String,
) -> Verdict {
    if let Some((_, why)) = who
        .failed
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&tool.name) || n.eq_ignore_ascii_case(&tool.id))
    {
        return Err(format!("failed earlier in this session: {why}"));
    }
    match who.channel {
        Some(c) => channel_verdict(data, tool, c, label),
        None => Ok("no session restriction".into()),
    }
}
