//! The `toolgraph` command line: arguments, one module per command family
//! (catalog, search, eval), rendering apart.

mod airlock;
mod call;
mod catalog;
mod eval;
mod render;
mod scope;
mod search;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use toolgraph::engine::{Embeddings, Engine, EngineOptions, GraphServer};

#[derive(Parser, Debug)]
#[command(
    name = "toolgraph",
    version,
    about = "Find and disambiguate the right tool for an AI planner"
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Options every command takes.
#[derive(Args, Debug, Clone)]
pub(crate) struct Global {
    /// Store directory (RocksDB). Default: the user's data dir /toolgraph.
    #[arg(long, global = true, env = "TOOLGRAPH_DATA")]
    data: Option<PathBuf>,
    /// Keep everything in memory (nothing is persisted).
    #[arg(long, global = true)]
    memory: bool,
    /// Embedding model directory (installed by scripts/setup.sh).
    #[arg(long, global = true, env = "TOOLGRAPH_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// Run without the dense channel (no model needed).
    #[arg(long, global = true)]
    no_embed: bool,
    /// Keep the catalog on a graph server over Bolt (Neo4j 5, ArcadeDB):
    /// `bolt://127.0.0.1:7687`. Without it, the embedded store.
    #[arg(
        long,
        global = true,
        env = "TOOLGRAPH_GRAPH",
        conflicts_with = "memory"
    )]
    graph: Option<String>,
    /// The graph server's user.
    #[arg(
        long,
        global = true,
        env = "TOOLGRAPH_GRAPH_USER",
        default_value = "neo4j"
    )]
    graph_user: String,
    /// The environment variable that holds the graph server's password
    /// (never the password itself on the command line).
    #[arg(long, global = true, default_value = "TOOLGRAPH_GRAPH_PASSWORD")]
    graph_password_env: String,
    /// The database on the graph server.
    #[arg(
        long,
        global = true,
        env = "TOOLGRAPH_GRAPH_DATABASE",
        default_value = "neo4j"
    )]
    graph_database: String,
}

#[derive(Subcommand, Debug)]
enum Command {
    #[command(flatten)]
    Catalog(catalog::Command),
    #[command(flatten)]
    Search(search::Command),
    #[command(flatten)]
    Eval(eval::Command),
    #[command(flatten)]
    Scope(scope::Command),
    #[command(flatten)]
    Airlock(airlock::Command),
    #[command(flatten)]
    Call(call::Command),
}

impl Global {
    /// The store directory, unless `--memory` or `--graph`.
    pub(crate) fn data_dir(&self) -> Option<PathBuf> {
        if self.memory || self.graph.is_some() {
            return None;
        }
        Some(self.data.clone().unwrap_or_else(|| {
            dirs::data_dir()
                .unwrap_or_else(std::env::temp_dir)
                .join("toolgraph")
        }))
    }

    pub(crate) fn model_dir(&self) -> PathBuf {
        self.model_dir
            .clone()
            .unwrap_or_else(toolgraph::engine::default_model_dir)
    }

    /// The model, unless `--no-embed`.
    pub(crate) fn embeddings(&self) -> Embeddings {
        if self.no_embed {
            Embeddings::Off
        } else {
            Embeddings::Model(self.model_dir())
        }
    }

    /// Opens the engine on the store; with `embed`, with the model.
    pub(crate) fn open(&self, embed: bool) -> Result<Engine> {
        let embeddings = if embed {
            self.embeddings()
        } else {
            Embeddings::Off
        };
        let mut opts = EngineOptions::memory(embeddings);
        opts.data_dir = self.data_dir();
        opts.graph = self.graph_server()?;
        opts.progress = std::io::stderr().is_terminal();
        Ok(Engine::open(opts)?)
    }

    /// The engine with the airlock over it (sources, review, gap counting).
    pub(crate) fn open_airlock(
        &self,
        options: toolgraph::airlock::AirlockOptions,
    ) -> Result<toolgraph::airlock::Airlock> {
        let engine = std::sync::Arc::new(self.open(true)?);
        Ok(toolgraph::airlock::Airlock::open(engine, options)?)
    }

    /// The graph server of `--graph`, with the password from its variable.
    pub(crate) fn graph_server(&self) -> Result<Option<GraphServer>> {
        let Some(url) = &self.graph else {
            return Ok(None);
        };
        let var = &self.graph_password_env;
        let password = std::env::var(var).map_err(|_| {
            anyhow::anyhow!(
                "--graph {url}: set the password in the environment variable {var} (or name another with --graph-password-env)"
            )
        })?;
        Ok(Some(GraphServer {
            url: url.clone(),
            user: self.graph_user.clone(),
            password,
            database: self.graph_database.clone(),
        }))
    }

    /// True when the catalog lives on a graph server other replicas share.
    pub(crate) fn shared(&self) -> bool {
        self.graph.is_some()
    }
}

/// Parses the arguments and runs the command; errors print one line per cause.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let g = &cli.global;
    let result = match cli.command {
        Command::Catalog(c) => catalog::run(g, c),
        Command::Search(c) => search::run(g, c),
        Command::Eval(c) => eval::run(g, c),
        Command::Scope(c) => scope::run(g, c),
        Command::Airlock(c) => airlock::run(g, c),
        Command::Call(c) => call::run(g, c),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            if let Some(toolgraph::error::Error::Violations(v)) =
                e.downcast_ref::<toolgraph::error::Error>()
            {
                for violation in v {
                    eprintln!("  {violation}");
                }
            }
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Prints a value as pretty JSON.
pub(crate) fn print_json(v: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
