//! Catalog commands: load, tools, constellation, sparql, validate, import,
//! index, migrate, serve.

use super::render;
use super::{Global, print_json};
use anyhow::{Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use toolgraph::engine::{Caller, Format, ListRequest, SparqlOutput, ToolFilter, bundled};

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Load the bundled ontology and seeds, then serve the HTTP API and MCP.
    Serve(Box<ServeArgs>),
    /// Load Turtle, MCP tools/list JSON, OpenAPI or JSONL files (one transaction).
    /// Manifests are screened (findings printed to stderr).
    Load {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long)]
        format: Option<String>,
        /// Refuse the files when screening finds a `block` reason.
        #[arg(long)]
        strict: bool,
    },
    /// List the tools in the store.
    Tools {
        /// Only this domain (local name such as `travel`, label or IRI).
        #[arg(long)]
        domain: Option<String>,
        /// Only the tools this source registered (as loaded, e.g. `seeds/travel.ttl`).
        #[arg(long)]
        source: Option<String>,
        #[command(flatten)]
        caller: Caller,
        #[arg(long)]
        json: bool,
    },
    /// Show one tool's constellation.
    Constellation {
        tool: String,
        #[arg(long, value_enum, default_value = "turtle")]
        format: ConstellationFormat,
    },
    /// Run a read-only SPARQL query (updates are refused).
    Sparql { query: String },
    /// Check Turtle syntax and the seed constraints.
    Validate {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Parse a manifest and print the constellations it would create.
    Import {
        file: PathBuf,
        #[arg(long)]
        format: Option<String>,
        /// Print instead of loading.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
        /// Refuse the file when screening finds a `block` reason.
        #[arg(long)]
        strict: bool,
    },
    /// Vector index health: count, model id, re-embedded on open.
    Index {
        #[arg(long)]
        json: bool,
    },
    /// Copy a catalog (every statement and the tool vectors) from an
    /// embedded store to a graph server, in one transaction.
    Migrate {
        /// The embedded store's data directory (the `--data` it was built with).
        #[arg(long)]
        from: PathBuf,
        /// The graph server (`bolt://127.0.0.1:7687`); user, password and
        /// database come from --graph-user, --graph-password-env, --graph-database.
        #[arg(long)]
        to: String,
        /// Overwrite the catalog the server already holds.
        #[arg(long)]
        replace: bool,
    },
}

/// `toolgraph serve`'s options.
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    #[arg(long, default_value = "127.0.0.1:7878")]
    addr: String,
    /// Keys file (JSON: [{"key", "role": "reader"|"admin", "org"?, "agent"?, "name"?}]).
    #[arg(long, env = "TOOLGRAPH_KEYS")]
    keys: Option<PathBuf>,
    /// Largest request body in bytes (registration uploads: 64 MiB).
    #[arg(long, default_value_t = 1 << 20)]
    max_body: usize,
    /// Seconds a request may take before it is answered 504.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Requests served at once; more wait (up to --max-queue), then 429.
    #[arg(long, default_value_t = 32)]
    max_in_flight: usize,
    #[arg(long, default_value_t = 256)]
    max_queue: usize,
    /// Connections open at once (capped by the open-file limit); more wait
    /// to be accepted.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Seconds a connection has to send its request headers (and an idle
    /// kept-alive connection stays open).
    #[arg(long, default_value_t = 10)]
    header_timeout: u64,
    /// A host name an open server (no keys) also answers to, besides
    /// localhost, 127.0.0.1 and [::1] (repeatable).
    #[arg(long = "allowed-host")]
    allowed_hosts: Vec<String>,
    #[command(flatten)]
    airlock: super::airlock::AirlockArgs,
    #[command(flatten)]
    gateway: super::call::GatewayArgs,
    /// Run the airlock's schedules (scheduled scans, health probes, gap
    /// discovery) every this many seconds (0: only when asked over HTTP).
    #[arg(long, default_value_t = 10)]
    schedule_tick: u64,
    /// With --graph: seconds between checks whether another replica
    /// changed the shared catalog (0: never).
    #[arg(long, default_value_t = 2.0)]
    graph_poll: f64,
    /// Extra files or directories to load before serving.
    paths: Vec<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub(crate) enum ConstellationFormat {
    Turtle,
    Json,
    Dot,
}

/// A SPARQL query from the command line is cancelled after this.
const SPARQL_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

fn parse_format(f: &Option<String>) -> Result<Option<Format>> {
    Ok(f.as_deref().map(str::parse).transpose()?)
}

pub(crate) fn run(g: &Global, command: Command) -> Result<ExitCode> {
    match command {
        Command::Serve(args) => serve(g, *args)?,
        Command::Load {
            paths,
            format,
            strict,
        } => {
            let engine = g.open(true)?;
            let outcome =
                engine.load_paths_screened(&paths, parse_format(&format)?, Some(strict))?;
            render::screening(&outcome.screening);
            println!(
                "loaded {} file(s): {} -> {} quads, {} tools; {}",
                outcome.files.len(),
                outcome.store.quads_before,
                outcome.store.quads_after,
                outcome.store.tools,
                render::sync_line(outcome.embeddings.as_ref())
            );
        }
        Command::Tools {
            domain,
            source,
            caller,
            json,
        } => tools(g, ToolFilter { domain, source }, caller, json)?,
        Command::Constellation { tool, format } => constellation(g, &tool, format)?,
        Command::Sparql { query } => sparql(g, &query)?,
        Command::Validate { paths } => return validate(&paths),
        Command::Import {
            file,
            format,
            dry_run,
            json,
            strict,
        } => import(g, file, parse_format(&format)?, dry_run, json, strict)?,
        Command::Migrate { from, to, replace } => migrate(g, &from, &to, replace)?,
        Command::Index { json } => {
            // Read the index as stored, without re-embedding anything.
            let health = g.open(false)?.index_health(&g.model_dir())?;
            if json {
                print_json(&health)?;
            } else {
                println!(
                    "vectors: {} (dim {}), model {}, stale {}",
                    health.count, health.dim, health.model_id, health.stale
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolgraph serve`: the bundled ontology and seeds (and `paths`), then
/// the service until SIGTERM.
fn serve(g: &Global, a: ServeArgs) -> Result<()> {
    toolgraph::server::init_tracing();
    toolgraph::alloc::trim_c_heap(std::time::Duration::from_secs(10));
    let admin = std::env::var("TOOLGRAPH_ADMIN_KEY").ok();
    let keys = toolgraph::server::Keys::load(admin.as_deref(), a.keys.as_deref())?;
    let engine = g.open(true)?;
    let mut all = vec![bundled("ontology"), bundled("seeds")];
    all.extend(a.paths);
    let outcome = engine.load_paths(&all, None)?;
    eprintln!(
        "loaded {} files: {} tools; {}",
        outcome.files.len(),
        outcome.store.tools,
        render::sync_line(outcome.embeddings.as_ref())
    );
    let options = toolgraph::server::ServeOptions {
        keys,
        limits: toolgraph::server::Limits {
            body_bytes: a.max_body,
            request_timeout: std::time::Duration::from_secs(a.timeout.max(1)),
            max_in_flight: a.max_in_flight,
            max_queue: a.max_queue,
            max_connections: a.max_connections,
            header_read_timeout: std::time::Duration::from_secs(a.header_timeout.max(1)),
            ..Default::default()
        },
        reload: all,
        airlock: a.airlock.options(),
        schedule_tick: (a.schedule_tick > 0)
            .then(|| std::time::Duration::from_secs(a.schedule_tick)),
        graph_poll: (g.shared() && a.graph_poll > 0.0)
            .then(|| std::time::Duration::try_from_secs_f64(a.graph_poll.max(0.05)).ok())
            .flatten(),
        allowed_hosts: a.allowed_hosts,
        gateway: a.gateway.options()?,
    };
    Ok(toolgraph::server::serve(engine, &a.addr, options)?)
}

/// `toolgraph tools`: the tools a caller may see, one line each.
fn tools(g: &Global, filter: ToolFilter, caller: Caller, json: bool) -> Result<()> {
    let engine = g.open(false)?;
    engine.require_catalog()?;
    let page = engine.list(&ListRequest {
        caller,
        filter,
        ..ListRequest::default()
    })?;
    if json {
        return print_json(&page.tools);
    }
    for t in &page.tools {
        let approval = if t.requires_approval {
            "  (requires approval)"
        } else {
            ""
        };
        println!("{}{approval}", render::tool_line(&t.tool));
    }
    for w in &page.warnings {
        match (&w.tool, w.layer) {
            (Some(tool), Some(layer)) => eprintln!("warning: {tool}: {} ({layer})", w.reason),
            _ => eprintln!("warning: {}", w.reason),
        }
    }
    eprintln!("{} tools", page.total);
    Ok(())
}

/// `toolgraph constellation`: one tool's links.
fn constellation(g: &Global, tool: &str, format: ConstellationFormat) -> Result<()> {
    let engine = g.open(false)?;
    engine.require_catalog()?;
    let Some(t) = engine.tool(tool) else {
        bail!("no tool named `{tool}` (see `toolgraph tools`)");
    };
    match format {
        ConstellationFormat::Json => print_json(&t)?,
        ConstellationFormat::Turtle => {
            for line in engine.constellation(&t.iri)? {
                println!("{line}");
            }
        }
        ConstellationFormat::Dot => println!("{}", render::constellation_dot(&t)),
    }
    Ok(())
}

/// `toolgraph sparql`: a read-only query, tab-separated.
fn sparql(g: &Global, query: &str) -> Result<()> {
    let engine = g.open(false)?;
    match engine.sparql(query, SPARQL_TIME_LIMIT)? {
        SparqlOutput::Boolean(b) => println!("{b}"),
        SparqlOutput::Graph(lines) => lines.iter().for_each(|l| println!("{l}")),
        SparqlOutput::Solutions { vars, rows } => {
            println!("{}", vars.join("\t"));
            for row in rows {
                let cells: Vec<String> = row.into_iter().map(|c| c.unwrap_or_default()).collect();
                println!("{}", cells.join("\t"));
            }
        }
    }
    Ok(())
}

/// `toolgraph import`: a manifest, loaded or (with --dry-run) shown.
fn import(
    g: &Global,
    file: PathBuf,
    format: Option<Format>,
    dry_run: bool,
    json: bool,
    strict: bool,
) -> Result<()> {
    let engine = g.open(!dry_run)?;
    if !dry_run {
        let outcome = engine.load_paths_screened(&[file], format, Some(strict))?;
        render::screening(&outcome.screening);
        println!(
            "imported: {} tools in the store; {}",
            outcome.store.tools,
            render::sync_line(outcome.embeddings.as_ref())
        );
        return Ok(());
    }
    let items = engine.dry_run(std::slice::from_ref(&file), format)?;
    if json {
        return print_json(&items);
    }
    for c in &items {
        println!("{}", render::constellation_summary(c));
    }
    eprintln!("{} tool(s) would be created", items.len());
    Ok(())
}

/// `toolgraph migrate`: statements first (one transaction), then the
/// vectors as properties of the tool nodes.
#[cfg(not(feature = "neo4j"))]
fn migrate(_: &Global, _: &std::path::Path, to: &str, _: bool) -> Result<()> {
    bail!("{to}: this toolgraph was built without the graph-server backend (cargo feature `neo4j`)")
}

#[cfg(feature = "neo4j")]
fn migrate(g: &Global, from: &std::path::Path, to: &str, replace: bool) -> Result<()> {
    let mut target_options = g.clone();
    target_options.graph = Some(to.to_string());
    let Some(server) = target_options.graph_server()? else {
        bail!("--to needs a bolt:// address");
    };
    let m = toolgraph::migrate::migrate_to(from, &server, replace)?;
    println!(
        "migrated {} statements ({} sources, {} tools) and {} tool vectors{} to {} (database {})",
        m.statements,
        m.sources,
        m.tools,
        m.vectors,
        if m.model_id.is_empty() {
            String::new()
        } else {
            format!(" (model {})", m.model_id)
        },
        server.url,
        server.database
    );
    Ok(())
}

fn validate(paths: &[PathBuf]) -> Result<ExitCode> {
    let v = match toolgraph::engine::validate(paths) {
        Ok(v) => v,
        Err(e) => {
            // Syntax errors print as `file:line:col: message`.
            eprintln!("{}", e.report());
            return Ok(ExitCode::FAILURE);
        }
    };
    if v.violations.is_empty() {
        println!(
            "ok: {} file(s), {} quads, {} tools, no violations",
            v.files, v.quads, v.tools
        );
        return Ok(ExitCode::SUCCESS);
    }
    for violation in &v.violations {
        println!("{violation}");
    }
    eprintln!("{} violation(s)", v.violations.len());
    Ok(ExitCode::FAILURE)
}
