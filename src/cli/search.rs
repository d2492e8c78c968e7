//! Ranking commands: search, resolve, extract, embed.

use super::render;
use super::{Global, print_json};
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use std::process::ExitCode;
use toolgraph::engine::{Caller, Mode, PromptRequest, ResolveRequest, SearchRequest};

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Rank tools for a request.
    Search {
        text: String,
        #[arg(long)]
        verb: Option<String>,
        #[arg(long, default_value = "joint")]
        mode: String,
        /// Matches (default 10, at most 100).
        #[arg(long, default_value_t = 0)]
        limit: usize,
        /// Print each match's explanation (channel scores, graph paths).
        #[arg(long)]
        explain: bool,
        /// Expand dependsOn into ordered prerequisites.
        #[arg(long)]
        dependencies: bool,
        /// The conversation so far (earlier turns, one a line): evidence
        /// weighed below TEXT ("delete it" after "book a table for two").
        #[arg(long)]
        context: Option<String>,
        #[arg(long)]
        json: bool,
        /// `prompt` renders the matches for an LLM prompt.
        #[arg(long, value_enum, default_value = "text")]
        format: OutputFormat,
        /// Token budget for --format prompt.
        #[arg(long, default_value_t = 800)]
        budget: usize,
        #[command(flatten)]
        caller: Caller,
    },
    /// Substitute a catalog tool for a planner verb, or advise decomposition.
    Resolve {
        #[arg(long)]
        verb: String,
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        context: Option<String>,
        #[command(flatten)]
        caller: Caller,
        #[arg(long)]
        json: bool,
    },
    /// Show the mentions the extractor finds in a text.
    Extract {
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Embed a text with the real model.
    Embed {
        text: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(crate) enum OutputFormat {
    Text,
    Prompt,
}

pub(crate) fn run(g: &Global, command: Command) -> Result<ExitCode> {
    match command {
        Command::Search {
            text,
            verb,
            mode,
            limit,
            explain,
            dependencies,
            context,
            json,
            format,
            budget,
            caller,
        } => {
            let mode: Mode = mode.parse()?;
            let engine = g.open(mode.uses_dense())?;
            engine.require_catalog()?;
            if format == OutputFormat::Prompt {
                let prompt = engine.prompt(&PromptRequest {
                    text,
                    verb,
                    limit,
                    budget_tokens: budget,
                    caller,
                    context,
                    ..PromptRequest::default()
                })?;
                print!("{}", prompt.prompt);
                return Ok(ExitCode::SUCCESS);
            }
            let resp = engine.search(&SearchRequest {
                text,
                verb,
                mode,
                limit,
                dependencies,
                caller,
                explain: explain || json,
                context,
                ..SearchRequest::default()
            })?;
            if json {
                print_json(&resp)?;
            } else {
                print!("{}", render::matches(&resp, explain));
            }
        }
        Command::Resolve {
            verb,
            description,
            context,
            caller,
            json,
        } => {
            // With the airlock open, a decompose outcome counts as a gap.
            let airlock = g.open_airlock(Default::default())?;
            let engine = airlock.engine();
            engine.require_catalog()?;
            let r = engine.resolve(&ResolveRequest {
                verb,
                description,
                context,
                caller,
            })?;
            if json {
                print_json(&r)?;
            } else {
                println!(
                    "{}: {} (confidence {:.2})\n{}",
                    serde_json::to_value(r.decision)?.as_str().unwrap_or("?"),
                    r.tool.as_deref().unwrap_or("-"),
                    r.confidence,
                    r.reason
                );
            }
        }
        Command::Extract { text, json } => extract(g, &text, json)?,
        Command::Embed { text, json } => embed(g, &text, json)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolgraph extract`: the mentions in a text.
fn extract(g: &Global, text: &str, json: bool) -> Result<()> {
    let engine = g.open(false)?;
    engine.require_catalog()?;
    let mentions = engine.extract(text);
    if json {
        return print_json(&mentions);
    }
    for m in &mentions {
        let iris: Vec<String> = m
            .iris
            .iter()
            .map(|r| format!("{} ({:.2})", r.iri, r.weight))
            .collect();
        println!(
            "{:>3}..{:<3} {:<13} {:<24} {:<16} {}",
            m.start,
            m.end,
            format!("{:?}", m.kind),
            m.surface,
            m.value,
            iris.join(", ")
        );
    }
    Ok(())
}

/// `toolgraph embed`: one text's vector from the real model.
fn embed(g: &Global, text: &str, json: bool) -> Result<()> {
    let (model_id, v) = toolgraph::engine::embed_text(&g.model_dir(), text)?;
    let out = serde_json::json!({
        "model_id": model_id,
        "dim": v.len(),
        "vector": v,
    });
    if json {
        println!("{out}");
    } else {
        println!(
            "model {} dim {}: [{:.4}, {:.4}, {:.4}, …]",
            out["model_id"],
            v.len(),
            v.first().copied().unwrap_or(0.0),
            v.get(1).copied().unwrap_or(0.0),
            v.get(2).copied().unwrap_or(0.0)
        );
    }
    Ok(())
}
