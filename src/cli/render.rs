//! Text renderings for the terminal: tools, constellations (text, DOT),
//! matches, load reports.

use toolgraph::engine::{SearchResponse, SyncReport};
use toolgraph::model::{Constellation, Dependency, Link, Provenance, Tool};

/// One line per tool: name, verbs, first entities, read-only.
pub(crate) fn tool_line(t: &Tool) -> String {
    let verbs: Vec<&str> = t.verbs.iter().map(|l| &*l.label).collect();
    let ents: Vec<&str> = t.entities.iter().take(4).map(|l| &*l.label).collect();
    format!(
        "{:<32} {:<12} {}{}",
        t.name,
        verbs.join(","),
        ents.join(", "),
        if t.read_only { "  (read-only)" } else { "" }
    )
}

/// What an embedding sync did, in one line.
pub(crate) fn sync_line(s: Option<&SyncReport>) -> String {
    match s {
        Some(s) => format!(
            "vectors: {} ({} embedded, {}{} reused, {} dropped{}), model {}",
            s.total,
            s.embedded,
            if s.shared > 0 {
                format!("{} from the graph server, ", s.shared)
            } else {
                String::new()
            },
            s.reused,
            s.dropped,
            if s.full_reindex {
                ", full re-index"
            } else {
                ""
            },
            s.model_id
        ),
        None => "vectors: off".into(),
    }
}

/// One line per constellation: name, verb, entities, domains.
pub(crate) fn constellation_summary(c: &Constellation) -> String {
    let labels = |links: &[Link]| {
        links
            .iter()
            .map(|l| format!("{} ({:.2})", l.label, l.weight))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{}\n  verb: {}\n  entities: {}\n  domains: {}\n  read-only: {}{}",
        c.descriptor.name,
        labels(&c.verbs),
        labels(&c.entities),
        labels(&c.domains),
        c.read_only,
        if c.depends_on.is_empty() {
            String::new()
        } else {
            let deps: Vec<String> = c.depends_on.iter().map(dependency_label).collect();
            format!("\n  depends on: {}", deps.join(", "))
        }
    )
}

/// `get_timezone (PARAMETER_DIRECTLY_DEPENDS_ON, parameter timezone: reason)`.
pub(crate) fn dependency_label(d: &Dependency) -> String {
    let mut parts = Vec::new();
    if let Some(k) = &d.facts.kind {
        parts.push(k.clone());
    }
    if let Some(p) = &d.facts.parameter {
        parts.push(format!("parameter {p}"));
    }
    let mut out = d.on.clone();
    if !parts.is_empty() || d.facts.reason.is_some() {
        out.push_str(" (");
        out.push_str(&parts.join(", "));
        if let Some(r) = &d.facts.reason {
            if !parts.is_empty() {
                out.push_str(": ");
            }
            out.push_str(r);
        }
        out.push(')');
    }
    out
}

/// A tool's constellation as a Graphviz digraph (extracted links dashed).
pub(crate) fn constellation_dot(t: &Tool) -> String {
    fn q(s: &str) -> String {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
    let mut out = format!(
        "digraph constellation {{\n  rankdir=LR;\n  {} [shape=box, style=bold];\n",
        q(&t.name)
    );
    let mut edge = |label: &str, target: &str, extracted: bool| {
        out.push_str(&format!(
            "  {} -> {} [label={}{}];\n",
            q(&t.name),
            q(target),
            q(label),
            if extracted { ", style=dashed" } else { "" }
        ));
    };
    let links = [
        ("performs", &t.verbs),
        ("actsOn", &t.entities),
        ("inDomain", &t.domains),
    ];
    for (label, links) in links {
        for l in links {
            edge(label, &l.label, l.provenance == Provenance::Extracted);
        }
    }
    for l in &t.categories {
        edge("inCategory", &l.label, false);
    }
    for l in &t.integrations {
        edge("requiresIntegration", &l.label, false);
    }
    for l in &t.channels {
        edge("availableOnChannel", &l.label, false);
    }
    for d in &t.depends_on {
        let label = match &d.facts.parameter {
            Some(p) => format!("dependsOn ({p})"),
            None => "dependsOn".to_string(),
        };
        edge(&label, &d.on, false);
    }
    out.push_str("}\n");
    out
}

/// A search answer for the terminal; `explain` adds paths and decisions.
pub(crate) fn matches(resp: &SearchResponse, explain: bool) -> String {
    let mut out = String::new();
    for (i, m) in resp.matches.iter().enumerate() {
        out.push_str(&format!(
            "{:>2}. {:<32} score {:.3}  confidence {:.2}  [graph {:.2} dense {:.2} lexical {:.2}]{}\n",
            i + 1,
            m.tool,
            m.score,
            m.confidence,
            m.details.graph,
            m.details.dense,
            m.details.lexical,
            if m.details.exact_name {
                "  exact name"
            } else {
                ""
            }
        ));
        if explain {
            if let Some(d) = &m.details.decided_by {
                out.push_str(&format!("      decided: {d}\n"));
            }
            for p in &m.details.paths {
                out.push_str(&format!("      {:+.2} {}\n", p.weight, p.explain));
            }
        }
        if let Some(p) = &m.details.prerequisite_of {
            out.push_str(&format!("      {}\n", p.explain));
        }
        if !m.prerequisites.is_empty() {
            out.push_str(&format!("      first: {}\n", m.prerequisites.join(" -> ")));
        }
    }
    if resp.ambiguous
        && let Some(c) = &resp.clarify
    {
        out.push_str(&format!("ambiguous: {}\n", c.question));
        for ct in &c.contenders {
            out.push_str(&format!("  {}: {}\n", ct.tool, ct.facts.join(", ")));
        }
    }
    if resp.abstain {
        out.push_str("abstain: no tool fits confidently\n");
    }
    out
}

/// Screening findings of loaded manifests, worst first, on stderr (the
/// same report `POST /v1/tools` answers and the airlock's review shows).
pub(crate) fn screening(report: &[toolgraph::screen::Screening]) {
    if report.is_empty() {
        return;
    }
    let mut report: Vec<&toolgraph::screen::Screening> = report.iter().collect();
    report.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.tool.cmp(&b.tool)));
    eprintln!("screening: {} tool(s) with findings", report.len());
    for s in report {
        let score = s
            .score
            .map(|x| format!(", score {x:.2}"))
            .unwrap_or_default();
        eprintln!("  {} [{}{score}]", s.tool, s.severity.as_str());
        for r in &s.reasons {
            eprintln!(
                "    {} {}: {} ({}){}",
                r.severity.as_str(),
                r.code,
                r.message,
                r.field.as_deref().unwrap_or("-"),
                r.evidence
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            );
        }
    }
}
