#![allow(clippy::result_large_err)] // the library error carries its location; cold path
//! The `toolgraph` command line.

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use toolgraph::{
    Embeddings, Engine, EngineOptions, Format, GraphStore, Mode, OxigraphStore, ResolveRequest,
    SearchRequest, SparqlOutput,
};

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

#[derive(Args, Debug, Clone)]
struct Global {
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
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load the bundled ontology and seeds, then serve the HTTP API.
    Serve {
        #[arg(long, default_value = "127.0.0.1:7878")]
        addr: String,
        /// Extra files or directories to load before serving.
        paths: Vec<PathBuf>,
    },
    /// Load Turtle, MCP tools/list JSON, OpenAPI or JSONL files (one transaction).
    Load {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long)]
        format: Option<String>,
    },
    /// List the tools in the store.
    Tools {
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
    },
    /// Substitute a catalog tool for a planner verb, or advise decomposition.
    Resolve {
        #[arg(long)]
        verb: String,
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        context: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show the mentions the extractor finds in a text.
    Extract {
        text: String,
        #[arg(long)]
        json: bool,
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
    },
    /// Embed a text with the real model.
    Embed {
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Vector index health: count, model id, re-embedded on open.
    Index {
        #[arg(long)]
        json: bool,
    },
    /// Accuracy harness: rank every query of a dataset and report metrics.
    Eval(Box<EvalArgs>),
    /// Fit the confidence model on dev data and print its reliability curve.
    Calibrate {
        /// Dataset directory with tools.jsonl, queries_awareness.jsonl, queries_reliability.jsonl.
        #[arg(long, default_value = "benches/datasets/metatool")]
        dataset: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// Tool catalog (JSONL: id, name, description, parameters).
    #[arg(long)]
    tools: PathBuf,
    /// Query files (JSONL: id, query, gold, tags, candidates?); repeatable.
    #[arg(long, required = true)]
    queries: Vec<PathBuf>,
    /// joint | graph | dense | lexical | all
    #[arg(long, default_value = "joint")]
    mode: String,
    /// Rank only each query's candidates.
    #[arg(long)]
    candidates: bool,
    /// A gold id matches any tool with the same name (id before '#').
    #[arg(long)]
    match_by_name: bool,
    /// Evaluate a deterministic sample of N queries per file.
    #[arg(long)]
    sample: Option<usize>,
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Print the reports as JSON.
    #[arg(long)]
    json: bool,
    /// Append the reports as JSON lines to this file (for --plot over several runs).
    #[arg(long)]
    append: Option<PathBuf>,
    /// Write a Markdown report.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Draw a grouped bar chart (SVG) of every report in --append (or this run).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Fusion weights graph,dense,lexical (default: the tuned ones).
    #[arg(long, value_delimiter = ',')]
    weights: Option<Vec<f32>>,
    /// Abstain when the top confidence is below this (default: the tuned one).
    #[arg(long)]
    abstain_below: Option<f32>,
    /// Compare with a baseline (JSON lines, as written by --append); exit non-zero when a metric drops more than --max-drop.
    #[arg(long)]
    baseline: Option<PathBuf>,
    #[arg(long, default_value_t = 0.02)]
    max_drop: f64,
    /// Fields BM25 indexes: name,description[,parameters] (default: all three).
    #[arg(long, value_delimiter = ',')]
    lexical_fields: Option<Vec<String>>,
    /// Name the mode this way in reports (e.g. `bm25-ref` for the reference BM25 run).
    #[arg(long)]
    label: Option<String>,
    /// Switch off the exact-name guarantee (plain BM25 for reference runs).
    #[arg(long)]
    no_exact_names: bool,
    /// Rank multi-step requests as one text only (no per-step ranking).
    #[arg(long)]
    no_steps: bool,
    /// Write per-query channel scores (JSON lines) for fusion/confidence fits, instead of a report.
    #[arg(long)]
    dump_features: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum ConstellationFormat {
    Turtle,
    Json,
    Dot,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
enum OutputFormat {
    Text,
    Prompt,
}

fn bundled(dir: &str) -> PathBuf {
    let local = PathBuf::from(dir);
    if local.is_dir() {
        local
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
    }
}

fn data_dir(g: &Global) -> Option<PathBuf> {
    if g.memory {
        return None;
    }
    Some(g.data.clone().unwrap_or_else(|| {
        dirs::data_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("toolgraph")
    }))
}

fn embeddings_of(g: &Global) -> Embeddings {
    if g.no_embed {
        Embeddings::Off
    } else {
        Embeddings::Model(
            g.model_dir
                .clone()
                .unwrap_or_else(toolgraph::default_model_dir),
        )
    }
}

fn open(g: &Global, embed: bool) -> Result<Engine> {
    let embeddings = if embed {
        embeddings_of(g)
    } else {
        Embeddings::Off
    };
    let mut opts = EngineOptions::memory(embeddings);
    opts.data_dir = data_dir(g);
    opts.progress = std::io::stderr().is_terminal();
    Ok(Engine::open(opts)?)
}

fn parse_format(f: &Option<String>) -> Result<Option<Format>> {
    f.as_deref()
        .map(|s| s.parse::<Format>())
        .transpose()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

fn print_json(v: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One clear line per cause; no backtrace.
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let g = &cli.global;
    match cli.command {
        Command::Serve { addr, paths } => {
            let engine = open(g, true)?;
            let mut all = vec![bundled("ontology"), bundled("seeds")];
            all.extend(paths);
            let outcome = engine.load_paths(&all, None)?;
            eprintln!(
                "loaded {} files: {} tools; {}",
                outcome.files.len(),
                outcome.store.tools,
                sync_line(outcome.embeddings.as_ref())
            );
            toolgraph::serve(engine, &addr)?;
        }
        Command::Load { paths, format } => {
            let engine = open(g, true)?;
            let outcome = engine.load_paths(&paths, parse_format(&format)?)?;
            println!(
                "loaded {} file(s): {} -> {} quads, {} tools; {}",
                outcome.files.len(),
                outcome.store.quads_before,
                outcome.store.quads_after,
                outcome.store.tools,
                sync_line(outcome.embeddings.as_ref())
            );
        }
        Command::Tools { json } => {
            let engine = open(g, false)?;
            let tools = engine.tools();
            if json {
                print_json(&tools)?;
            } else {
                for t in &tools {
                    let verbs: Vec<&str> = t.verbs.iter().map(|l| l.label.as_str()).collect();
                    let ents: Vec<&str> = t
                        .entities
                        .iter()
                        .take(4)
                        .map(|l| l.label.as_str())
                        .collect();
                    println!(
                        "{:<32} {:<12} {}{}",
                        t.name,
                        verbs.join(","),
                        ents.join(", "),
                        if t.read_only { "  (read-only)" } else { "" }
                    );
                }
                eprintln!("{} tools", tools.len());
            }
        }
        Command::Constellation { tool, format } => {
            let engine = open(g, false)?;
            let Some(t) = engine.tool(&tool) else {
                bail!("no tool named `{tool}` (see `toolgraph tools`)");
            };
            match format {
                ConstellationFormat::Json => print_json(&t)?,
                ConstellationFormat::Turtle => {
                    for line in engine.store().constellation(&t.iri)? {
                        println!("{line}");
                    }
                }
                ConstellationFormat::Dot => println!("{}", toolgraph::constellation_dot(&t)),
            }
        }
        Command::Sparql { query } => {
            let engine = open(g, false)?;
            match engine.store().sparql(&query)? {
                SparqlOutput::Boolean(b) => println!("{b}"),
                SparqlOutput::Graph(lines) => lines.iter().for_each(|l| println!("{l}")),
                SparqlOutput::Solutions { vars, rows } => {
                    println!("{}", vars.join("\t"));
                    for row in rows {
                        let cells: Vec<String> =
                            row.into_iter().map(|c| c.unwrap_or_default()).collect();
                        println!("{}", cells.join("\t"));
                    }
                }
            }
        }
        Command::Validate { paths } => return validate(&paths),
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
        } => {
            let mode: Mode = mode.parse()?;
            let engine = open(g, matches!(mode, Mode::Joint | Mode::Dense))?;
            let req = SearchRequest {
                text,
                verb,
                mode,
                limit,
                dependencies,
                ..SearchRequest::default()
            };
            let resp = engine.search(&req)?;
            if json {
                print_json(&resp)?;
            } else if format == OutputFormat::Prompt {
                let names: Vec<String> = resp.matches.iter().map(|m| m.id.clone()).collect();
                print!("{}", engine.render_prompt(&names, budget));
            } else {
                for (i, m) in resp.matches.iter().enumerate() {
                    println!(
                        "{:>2}. {:<32} score {:.3}  confidence {:.2}  [graph {:.2} dense {:.2} lexical {:.2}]{}",
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
                    );
                    if explain {
                        if let Some(d) = &m.details.decided_by {
                            println!("      decided: {d}");
                        }
                        for p in &m.details.paths {
                            println!("      {:+.2} {}", p.weight, p.explain);
                        }
                    }
                    if !m.prerequisites.is_empty() {
                        println!("      first: {}", m.prerequisites.join(" -> "));
                    }
                }
                if resp.ambiguous
                    && let Some(c) = &resp.clarify
                {
                    {
                        println!("ambiguous: {}", c.question);
                        for ct in &c.contenders {
                            println!("  {}: {}", ct.tool, ct.facts.join(", "));
                        }
                    }
                }
                if resp.abstain {
                    println!("abstain: no tool fits confidently");
                }
            }
        }
        Command::Resolve {
            verb,
            description,
            context,
            json,
        } => {
            let engine = open(g, true)?;
            let r = engine.resolve(&ResolveRequest {
                verb,
                description,
                context,
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
            let engine = open(g, false)?;
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
        Command::Import {
            file,
            format,
            dry_run,
            json,
        } => {
            let engine = open(g, !dry_run)?;
            let format = parse_format(&format)?;
            if dry_run {
                let sources = engine.prepare(std::slice::from_ref(&file), format)?;
                let items = toolgraph::constellations_of(&sources);
                if json {
                    print_json(&items)?;
                } else {
                    for c in &items {
                        println!("{}", toolgraph::constellation_summary(c));
                    }
                    eprintln!("{} tool(s) would be created", items.len());
                }
            } else {
                let outcome = engine.load_paths(&[file], format)?;
                println!(
                    "imported: {} tools in the store; {}",
                    outcome.store.tools,
                    sync_line(outcome.embeddings.as_ref())
                );
            }
        }
        Command::Embed { text, json } => {
            let dir = g
                .model_dir
                .clone()
                .unwrap_or_else(toolgraph::default_model_dir);
            let embedder = toolgraph::FastEmbedder::load(&dir)?;
            let v = toolgraph::Embedder::embed_query(&embedder, &text)?;
            let out = serde_json::json!({
                "model_id": toolgraph::Embedder::model_id(&embedder),
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
        Command::Eval(args) => return eval(g, *args),
        Command::Calibrate { dataset, json } => {
            let report = toolgraph::eval::calibrate(
                &dataset,
                embeddings_of(g),
                std::io::stderr().is_terminal(),
            )?;
            if json {
                print_json(&report)?;
            } else {
                println!(
                    "calibration on {} samples ({} correct): weights {:?}\nlog-loss {:.3}, ECE {:.3}",
                    report.samples,
                    report.positives,
                    report.calibration.weights,
                    report.log_loss,
                    report.ece
                );
                println!("bin        n   mean conf  accuracy");
                for b in &report.bins {
                    println!(
                        "{:.1}-{:.1} {:>5}   {:.3}      {:.3}",
                        b.lo, b.hi, b.count, b.mean_confidence, b.accuracy
                    );
                }
            }
        }
        Command::Index { json } => {
            // Read the index as stored, without re-embedding anything.
            let engine = open(g, false)?;
            let Some(data) = data_dir(g) else {
                bail!("the vector index lives in the data dir; --memory has none");
            };
            let dir = g
                .model_dir
                .clone()
                .unwrap_or_else(toolgraph::default_model_dir);
            let model = toolgraph::FastEmbedder::load(&dir)?;
            let health = toolgraph::index_health(
                &data.join("vectors"),
                &engine.tools(),
                toolgraph::Embedder::model_id(&model),
            )?;
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

fn sync_line(s: Option<&toolgraph::SyncReport>) -> String {
    match s {
        Some(s) => format!(
            "vectors: {} ({} embedded, {} reused, {} dropped{}), model {}",
            s.total,
            s.embedded,
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

fn validate(paths: &[PathBuf]) -> Result<ExitCode> {
    let files = toolgraph::collect_files(paths)?;
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off))?;
    let sources = match engine.prepare(&files, None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let scratch = OxigraphStore::memory()?;
    if let Err(e) = scratch.load_unchecked(&sources) {
        // Syntax errors print as `file:line:col: message`.
        eprintln!("{e}");
        return Ok(ExitCode::FAILURE);
    }
    let violations = scratch.validate()?;
    if violations.is_empty() {
        println!(
            "ok: {} file(s), {} quads, {} tools, no violations",
            files.len(),
            scratch.len()?,
            scratch.tools()?.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for v in &violations {
        println!("{v}");
    }
    eprintln!("{} violation(s)", violations.len());
    Ok(ExitCode::FAILURE)
}

fn eval(g: &Global, args: EvalArgs) -> Result<ExitCode> {
    use toolgraph::eval::{self, EvalOptions, RunSpec, Setting};
    let modes: Vec<Mode> = if args.mode == "all" {
        vec![Mode::Joint, Mode::Graph, Mode::Dense, Mode::Lexical]
    } else {
        args.mode
            .split(',')
            .map(|m| m.parse())
            .collect::<Result<_, _>>()?
    };
    let progress = std::io::stderr().is_terminal();
    let needs_model = modes.iter().any(|m| matches!(m, Mode::Joint | Mode::Dense));
    let embeddings = if needs_model {
        embeddings_of(g)
    } else {
        Embeddings::Off
    };
    if args.weights.as_ref().is_some_and(|w| w.len() != 3) {
        bail!("--weights takes three numbers: graph,dense,lexical");
    }
    let mut rank = toolgraph::RankConfig::default();
    if let Some(w) = &args.weights {
        (rank.w_graph, rank.w_dense, rank.w_lexical) = (w[0], w[1], w[2]);
    }
    if let Some(t) = args.abstain_below {
        rank.abstain_below = t;
    }
    if args.no_steps {
        rank.steps = false;
    }
    if args.no_exact_names {
        rank.exact_names = false;
    }
    if let Some(fields) = &args.lexical_fields {
        let mut params = false;
        for f in fields {
            match f.trim() {
                "name" | "description" => {}
                "parameters" | "params" => params = true,
                other => bail!(
                    "--lexical-fields: unknown field `{other}` (expected name, description, parameters)"
                ),
            }
        }
        rank.lexical_params = params;
    }
    let rank = Some(rank);
    let engine = eval::engine_for(&args.tools, embeddings.clone(), progress, rank.clone())?;
    let name = eval::dataset_name(&args.tools);
    let mut reports = Vec::new();
    for qfile in &args.queries {
        let mut queries = eval::load_queries(qfile)?;
        if let Some(n) = args.sample {
            queries = eval::sample(&queries, n, args.seed);
        }
        let stem = qfile
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dataset = match stem.strip_prefix("queries_") {
            Some(sub) => format!("{name}/{sub}"),
            None => name.clone(),
        };
        let spec = RunSpec {
            dataset,
            tools: args.tools.clone(),
            queries,
            modes: modes.clone(),
            setting: if args.candidates {
                Setting::Candidates
            } else {
                Setting::Global
            },
            options: EvalOptions {
                match_by_name: args.match_by_name,
                k_max: 10,
            },
            embeddings: embeddings.clone(),
            progress,
            rank: rank.clone(),
        };
        if let Some(path) = &args.dump_features {
            let mut f = std::io::BufWriter::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("opening {}", path.display()))?,
            );
            let n = eval::dump_features(&engine, &spec, 30, &mut f)?;
            eprintln!("{}: {n} queries -> {}", spec.dataset, path.display());
            continue;
        }
        let mut run = eval::run_on(&engine, &spec)?;
        if let Some(label) = &args.label {
            for r in &mut run {
                r.mode.clone_from(label);
            }
        }
        reports.extend(run);
    }
    if args.dump_features.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        print_json(&reports)?;
    } else {
        println!("{}", eval::to_markdown(&reports));
    }
    if let Some(out) = &args.out {
        std::fs::write(out, eval::to_markdown(&reports))
            .with_context(|| format!("writing {}", out.display()))?;
    }
    let mut all = reports.clone();
    if let Some(path) = &args.append {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        for r in &reports {
            writeln!(f, "{}", serde_json::to_string(r)?)?;
        }
        all = std::fs::read_to_string(path)?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
    }
    if let Some(plot) = &args.plot {
        eval::plot_svg(&all, "top1", plot)?;
    }
    if let Some(path) = &args.baseline {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let baseline: Vec<toolgraph::eval::Report> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()
            .with_context(|| format!("parsing {}", path.display()))?;
        let baseline: Vec<_> = baseline
            .into_iter()
            .filter(|b| {
                reports
                    .iter()
                    .any(|r| r.dataset == b.dataset && r.setting == b.setting)
            })
            .collect();
        let regressions = eval::compare_to_baseline(&reports, &baseline, args.max_drop);
        if !regressions.is_empty() {
            for r in &regressions {
                eprintln!(
                    "REGRESSION {} {} [{}] {}: {:.3} -> {:.3}",
                    r.dataset, r.setting, r.tag, r.metric, r.baseline, r.current
                );
            }
            eprintln!(
                "{} metric(s) dropped more than {:.2} below {}",
                regressions.len(),
                args.max_drop,
                path.display()
            );
            return Ok(ExitCode::FAILURE);
        }
        eprintln!(
            "accuracy gate: no metric dropped more than {:.2} below {}",
            args.max_drop,
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
