//! Caller-scope commands: which tools a caller may see and why
//! (`policy explain`), its domains, and turn selection (`select`).

use super::{Global, print_json};
use anyhow::Result;
use clap::Subcommand;
use std::process::ExitCode;
use toolgraph::engine::{Caller, SelectRequest, Strategy};

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Caller policy: each layer's verdict on a tool for a caller.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// The domains a caller may see tools of, with counts.
    Domains {
        #[command(flatten)]
        caller: Caller,
        #[arg(long)]
        json: bool,
    },
    /// The goals in flow order: boundary, next goals, agents, and what the
    /// caller has under each.
    Goals {
        #[command(flatten)]
        caller: Caller,
        #[arg(long)]
        json: bool,
    },
    /// Choose the tools for one conversation turn (`--session` names the
    /// conversation; sessions live for the life of the process, so the
    /// command line shows one turn).
    Select {
        message: String,
        /// domains (whole domains, recency) or intents (keyword intents);
        /// default: the organization's, else domains.
        #[arg(long, value_enum)]
        strategy: Option<StrategyArg>,
        #[arg(long)]
        max_tools: Option<usize>,
        #[arg(long)]
        max_domains: Option<usize>,
        #[command(flatten)]
        caller: Caller,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum PolicyCommand {
    /// Each layer's verdict on TOOL for the caller, and the deciding layer.
    Explain {
        tool: String,
        #[command(flatten)]
        caller: Caller,
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum StrategyArg {
    Domains,
    Intents,
}

pub(crate) fn run(g: &Global, command: Command) -> Result<ExitCode> {
    match command {
        Command::Policy {
            command: PolicyCommand::Explain { tool, caller, json },
        } => {
            let engine = g.open(false)?;
            engine.require_catalog()?;
            let e = engine.explain_policy(&caller, &tool)?;
            if json {
                print_json(&e)?;
            } else {
                println!(
                    "{}: {}{} (decided by the {} layer)",
                    e.tool,
                    if e.allowed { "allowed" } else { "removed" },
                    if e.requires_approval {
                        ", requires approval"
                    } else {
                        ""
                    },
                    e.deciding
                );
                for v in &e.layers {
                    let mark = match (v.applies, v.allowed) {
                        (false, _) => "  -",
                        (true, true) => " ok",
                        (true, false) => " NO",
                    };
                    println!("{mark} {:<13} {}", v.layer.to_string(), v.reason);
                }
            }
        }
        Command::Goals { caller, json } => {
            let engine = g.open(false)?;
            engine.require_catalog()?;
            let goals = engine.goals(&caller)?;
            if json {
                print_json(&goals)?;
            } else {
                print_goals(&goals);
            }
        }
        Command::Domains { caller, json } => {
            let engine = g.open(false)?;
            engine.require_catalog()?;
            let domains = engine.domains(&caller)?;
            if json {
                print_json(&domains)?;
            } else {
                for d in &domains {
                    println!("domain:{:<20} {:>4} tools  {}", d.domain, d.tools, d.label);
                }
            }
        }
        Command::Select {
            message,
            strategy,
            max_tools,
            max_domains,
            caller,
            json,
        } => {
            let Some(session) = caller.session.clone() else {
                anyhow::bail!("select needs --session (the conversation)");
            };
            let engine = g.open(!matches!(strategy, Some(StrategyArg::Intents)))?;
            engine.require_catalog()?;
            let s = engine.select(&SelectRequest {
                session,
                message,
                caller: caller.clone(),
                strategy: strategy.map(|s| match s {
                    StrategyArg::Domains => Strategy::Domains,
                    StrategyArg::Intents => Strategy::Intents,
                }),
                max_tools,
                max_domains,
            })?;
            if json {
                print_json(&s)?;
            } else {
                println!("domains: {}", s.domains.join(", "));
                println!("tools: {}", s.tool_names.join(", "));
                if let Some(g) = &s.goal {
                    println!("goal: {}", g.hint);
                }
                for d in &s.dropped {
                    println!("dropped {}: {}", d.domain, d.reason);
                }
                for r in &s.reasoning {
                    println!("  - {r}");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The goals as `toolgraph goals` prints them.
fn print_goals(goals: &[toolgraph::engine::GoalInfo]) {
    for g in goals {
        let order = g.order.map_or("-".to_string(), |o| o.to_string());
        println!(
            "{order:>2}. {:<22} {:>4} tools  {}",
            g.goal, g.tools, g.label
        );
        let agents = match (&g.primary_agent, &g.fallback_agent) {
            (Some(p), Some(f)) => format!("{p} (fallback {f})"),
            (Some(p), None) => p.clone(),
            _ => "-".into(),
        };
        println!("    agent: {agents}   next: {}", g.next.join(", "));
        println!(
            "    operations: {}  (not {})",
            g.operations.join(", "),
            g.excluded_operations.join(", ")
        );
        println!("    entities: {}", g.entities.join(", "));
        println!("    categories: {}", g.categories.join(", "));
        println!("    tools: {}", g.available_tools.join(", "));
        for w in &g.warnings {
            let tool = w.tool.as_ref().map(|t| format!("{t}: "));
            println!("    warning: {}{}", tool.unwrap_or_default(), w.reason);
        }
    }
}
