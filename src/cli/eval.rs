//! Accuracy commands: eval (the harness, the CI gate) and calibrate.

use super::{Global, print_json};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use toolgraph::engine::{Embeddings, Mode, RankConfig};
use toolgraph::eval::{self, EvalOptions, RunSpec, Setting};

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
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
    /// Write a synthetic catalog drawn from the ontology (tools.jsonl, queries.jsonl), seeded.
    Synth {
        /// Number of tools.
        #[arg(long, default_value_t = 1_000)]
        tools: usize,
        /// Number of queries.
        #[arg(long, default_value_t = 500)]
        queries: usize,
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Ontology directory the tools are drawn from.
        #[arg(long, default_value = "ontology")]
        ontology: PathBuf,
        /// Output directory (created).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Args, Debug)]
pub(crate) struct EvalArgs {
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
    /// Also rank with `dependencies: true` (each match's prerequisites right
    /// after it), reported as `MODE+deps` beside the plain run.
    #[arg(long)]
    dependencies: bool,
    /// Rank the current turn alone: each query's `context` (earlier turns,
    /// a system prompt) is not passed.
    #[arg(long)]
    no_context: bool,
    /// Also rank every query on its current turn alone (reported as
    /// `MODE/turn`, beside the run with context).
    #[arg(long)]
    compare_context: bool,
    /// Hold the run to its floors on nDCG@10, overall and per tag: joint
    /// at least each channel and the reference BM25+dense hybrid (`rrf`,
    /// reported with `--mode all`) minus 0.005; `MODE+deps` at least
    /// `MODE` minus 0.005; exit non-zero on a miss.
    #[arg(long)]
    floors: bool,
    /// With --compare-context: joint at least the current turn alone plus
    /// this (overall); exit non-zero on a miss.
    #[arg(long)]
    context_gain: Option<f64>,
    /// Write per-query channel scores (JSON lines) for fusion/confidence fits, instead of a report.
    #[arg(long)]
    dump_features: Option<PathBuf>,
}

pub(crate) fn run(g: &Global, command: Command) -> Result<ExitCode> {
    match command {
        Command::Eval(args) => run_eval(g, *args),
        Command::Synth {
            tools,
            queries,
            seed,
            ontology,
            out,
        } => {
            let opts = toolgraph::synth::SynthOptions {
                tools,
                queries,
                seed,
            };
            let (tools_file, queries_file) = toolgraph::synth::write(&ontology, &opts, &out)?;
            println!(
                "wrote {} and {}",
                tools_file.display(),
                queries_file.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate { dataset, json } => {
            let report =
                eval::calibrate(&dataset, g.embeddings(), std::io::stderr().is_terminal())?;
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
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The ranking settings an eval run asks for.
fn rank_config(args: &EvalArgs) -> Result<RankConfig> {
    let mut rank = RankConfig::default();
    if let Some(w) = &args.weights {
        let [graph, dense, lexical] = w[..] else {
            bail!("--weights takes three numbers: graph,dense,lexical");
        };
        (rank.w_graph, rank.w_dense, rank.w_lexical) = (graph, dense, lexical);
    }
    if let Some(t) = args.abstain_below {
        rank.abstain_below = t;
    }
    rank.steps &= !args.no_steps;
    rank.exact_names &= !args.no_exact_names;
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
    Ok(rank)
}

fn run_eval(g: &Global, args: EvalArgs) -> Result<ExitCode> {
    let modes: Vec<Mode> = if args.mode == "all" {
        vec![Mode::Joint, Mode::Graph, Mode::Dense, Mode::Lexical]
    } else {
        args.mode
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()?
    };
    let progress = std::io::stderr().is_terminal();
    let embeddings = if modes.iter().any(|m| m.uses_dense()) {
        g.embeddings()
    } else {
        Embeddings::Off
    };
    let rank = Some(rank_config(&args)?);
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
            dependencies: args.dependencies,
            context: !args.no_context,
            compare_context: args.compare_context,
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
                r.mode = match r.mode.strip_suffix("+deps") {
                    Some(_) => format!("{label}+deps"),
                    None => label.clone(),
                };
            }
        }
        reports.extend(run);
    }
    if args.dump_features.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    report(&args, &reports)
}

/// Tolerance of the floors (`--floors`).
const FLOOR_TOLERANCE: f64 = 0.005;

/// Says every floor the run missed; whether it held them all.
fn hold_floors(reports: &[eval::Report], all: bool, context_gain: Option<f64>) -> bool {
    if !all && context_gain.is_none() {
        return true;
    }
    let missed = if all {
        eval::floors(reports, FLOOR_TOLERANCE, context_gain)
    } else {
        eval::context_floor(reports, context_gain)
    };
    for s in &missed {
        eprintln!(
            "FLOOR {} {} [{}] {} nDCG@10 {:.4} < {} {:.4}",
            s.dataset, s.setting, s.tag, s.mode, s.value, s.against, s.floor
        );
    }
    if missed.is_empty() {
        eprintln!("accuracy floors: held");
    }
    missed.is_empty()
}

/// Prints and writes an eval run's reports, and holds them to the baseline.
fn report(args: &EvalArgs, reports: &[eval::Report]) -> Result<ExitCode> {
    if args.json {
        print_json(&reports)?;
    } else {
        println!("{}", eval::to_markdown(reports));
    }
    if let Some(out) = &args.out {
        std::fs::write(out, eval::to_markdown(reports))
            .with_context(|| format!("writing {}", out.display()))?;
    }
    let mut all = reports.to_vec();
    if let Some(path) = &args.append {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        for r in reports {
            writeln!(f, "{}", serde_json::to_string(r)?)?;
        }
        all = eval::read_reports(path)?;
    }
    if let Some(plot) = &args.plot {
        eval::plot_svg(&all, "top1", plot)?;
    }
    let floors_held = hold_floors(reports, args.floors, args.context_gain);
    let baseline_held = match &args.baseline {
        Some(path) => hold_baseline(reports, path, args.max_drop)?,
        None => true,
    };
    Ok(if floors_held && baseline_held {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Says every metric that dropped more than `max_drop` below the
/// baseline at `path`; whether none did.
fn hold_baseline(reports: &[eval::Report], path: &std::path::Path, max_drop: f64) -> Result<bool> {
    let regressions = eval::gate(reports, path, max_drop)?;
    if regressions.is_empty() {
        eprintln!(
            "accuracy gate: no metric dropped more than {max_drop:.2} below {}",
            path.display()
        );
        return Ok(true);
    }
    for r in &regressions {
        eprintln!(
            "REGRESSION {} {} [{}] {}: {:.3} -> {:.3}",
            r.dataset, r.setting, r.tag, r.metric, r.baseline, r.current
        );
    }
    eprintln!(
        "{} metric(s) dropped more than {max_drop:.2} below {}",
        regressions.len(),
        path.display()
    );
    Ok(false)
}
