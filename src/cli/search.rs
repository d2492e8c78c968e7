//! Ranking commands: search, resolve, extract, embed.

use super::render;
use super::{CallerArgs, Global, print_json};
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use std::process::ExitCode;
use toolgraph::embed::{Embedder, FastEmbedder};
use toolgraph::rank::Mode;
use toolgraph::{ResolveRequest, SearchRequest};

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Rank tools for a request.
    Search {
        text: String,
        #[arg(long)]
        verb: Option<String>,
        #[arg(long, default_value = "joint")]
        mode: String,
        #[arg(long, default_value_t = 5)]
        limit: usize,
        /// Print each match's explanation (channel scores, graph paths).
        #[arg(long)]
        explain: bool,
        /// Expand dependsOn into ordered prerequisites.
        #[arg(long)]
        dependencies: bool,
        #[arg(long)]
        json: bool,
        /// `prompt` renders the matches for an LLM prompt.
        #[arg(long, value_enum, default_value = "text")]
        format: OutputFormat,
        /// Token budget for --format prompt.
        #[arg(long, default_value_t = 800)]
        budget: usize,
        #[command(flatten)]
        caller: CallerArgs,
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
        caller: CallerArgs,
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
            json,
            format,
            budget,
            caller,
        } => {
            let mode: Mode = mode.parse()?;
            let engine = g.open(mode.uses_dense())?;
            engine.require_catalog()?;
            let req = SearchRequest {
                text,
                verb,
                mode,
                limit,
                dependencies,
                caller: caller.caller(),
                ..SearchRequest::default()
            };
            let resp = engine.search(&req)?;
            if json {
                print_json(&resp)?;
            } else if format == OutputFormat::Prompt {
                let names: Vec<String> = resp.matches.iter().map(|m| m.id.clone()).collect();
                print!("{}", engine.render_prompt(&req.caller, &names, budget)?);
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
            let engine = std::sync::Arc::new(g.open(true)?);
            engine.require_catalog()?;
            // Through the airlock, so a decompose outcome counts as a gap.
            let airlock = toolgraph::airlock::Airlock::open(engine, Default::default())?;
            let r = airlock.resolve(&ResolveRequest {
                verb,
                description,
                context,
                caller: caller.caller(),
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
        Command::Extract { text, json } => {
            let engine = g.open(false)?;
            engine.require_catalog()?;
            let mentions = engine.extract(&text);
            if json {
                print_json(&mentions)?;
            } else {
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
            }
        }
        Command::Embed { text, json } => {
            let embedder = FastEmbedder::load(&g.model_dir())?;
            let v = embedder.embed_query(&text)?;
            let out = serde_json::json!({
                "model_id": embedder.model_id(),
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
        }
    }
    Ok(ExitCode::SUCCESS)
}
