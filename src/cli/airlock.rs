//! Airlock commands: sources (add, list, scan, delete), the review queue
//! (list, show, approve, reject), health probes and capability gaps. They
//! work on the store directly, as `serve` does over HTTP.

use super::{Global, print_json};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use toolgraph::airlock::{
    Airlock, AirlockOptions, Approval, NewSource, PendingTool, SourceKind, Status, fetch,
    parse_name,
};
use toolgraph::engine::{Budget, BudgetUnit, Grant, Period};
use toolgraph::error::Field;

/// Scan, health and discovery options (`serve` and the airlock commands).
#[derive(Args, Debug, Clone)]
pub(crate) struct AirlockArgs {
    /// Seconds one scan (or directory read) may take.
    #[arg(long, default_value_t = 20)]
    scan_timeout: u64,
    /// Bytes one scan may read.
    #[arg(long, default_value_t = 16 << 20)]
    scan_max_bytes: u64,
    /// Consecutive failed health checks that switch a tool off.
    #[arg(long, default_value_t = 3)]
    fail_after: u32,
    /// Consecutive successful checks that switch it back on.
    #[arg(long, default_value_t = 2)]
    recover_after: u32,
    /// Seconds between health probes under `serve` (0: only when asked).
    #[arg(long, default_value_t = 60)]
    health_every: u64,
    /// Look for tools that fill capability gaps (off by default).
    #[arg(long)]
    discover_gaps: bool,
    /// An API directory in the APIs.guru list.json format (path or URL).
    #[arg(long)]
    api_directory: Option<String>,
    /// Seconds between discovery runs under `serve`.
    #[arg(long, default_value_t = 3600)]
    discover_every: u64,
    /// A host, address or network (10.1.0.0/16) the airlock may fetch from
    /// although it is not public (loopback, private, link-local);
    /// repeatable. Public addresses need no allowance.
    #[arg(long = "airlock-allow")]
    airlock_allow: Vec<String>,
    /// File and folder sources must lie under this folder (without it the
    /// airlock reads no files).
    #[arg(long)]
    source_root: Option<PathBuf>,
}

impl AirlockArgs {
    pub(crate) fn options(&self) -> AirlockOptions {
        AirlockOptions {
            bounds: fetch::Bounds {
                timeout: Duration::from_secs(self.scan_timeout.max(1)),
                max_bytes: self.scan_max_bytes,
            },
            fail_after: self.fail_after.max(1),
            recover_after: self.recover_after.max(1),
            health_every: (self.health_every > 0).then(|| Duration::from_secs(self.health_every)),
            discovery: self.discover_gaps,
            directory: self.api_directory.clone(),
            discover_every: Duration::from_secs(self.discover_every.max(1)),
            reach: toolgraph::airlock::reach::Reach {
                allow: self.airlock_allow.clone(),
                source_root: self.source_root.clone(),
            },
            ..AirlockOptions::default()
        }
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Sources of tool definitions the airlock reads.
    Source {
        #[command(subcommand)]
        action: SourceAction,
        #[command(flatten)]
        airlock: AirlockArgs,
    },
    /// Discovered tools waiting for (or past) review.
    Pending {
        #[command(subcommand)]
        action: PendingAction,
        #[command(flatten)]
        airlock: AirlockArgs,
    },
    /// Probe every approved tool's health check once.
    Probe {
        #[command(flatten)]
        airlock: AirlockArgs,
        #[arg(long)]
        json: bool,
    },
    /// Capability gaps (verbs resolve had to decompose); with --discover,
    /// look for tools that would fill them.
    Gaps {
        #[arg(long)]
        discover: bool,
        #[command(flatten)]
        airlock: AirlockArgs,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum SourceAction {
    /// Add a source: `toolgraph source add openapi ./spec.yaml`.
    Add {
        /// openapi, mcp or directory.
        kind: SourceKind,
        /// A file, a folder, or an http(s) URL.
        location: String,
        /// Rescan every this many seconds under `serve`.
        #[arg(long)]
        schedule: Option<u64>,
        /// A URL probed for the health of this source's tools.
        #[arg(long)]
        health_url: Option<String>,
        /// A private host, address or network this source (its scans, its
        /// tools' calls) may reach (repeatable).
        #[arg(long = "allow")]
        allow: Vec<String>,
        /// Scan it right away.
        #[arg(long)]
        scan: bool,
    },
    List {
        #[arg(long)]
        json: bool,
    },
    /// Scan a source now.
    Scan { id: String },
    /// Delete a source, its review items and the tools approved from it.
    Delete { id: String },
}

#[derive(Subcommand, Debug)]
pub(crate) enum PendingAction {
    /// Items (default: those waiting for review: pending and changed).
    List {
        /// pending, approved, rejected, changed, missing or all.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// One item with its reasons, diff and manifest (JSON).
    Show { id: String },
    /// Approve: register it with its usage policy.
    Approve {
        id: String,
        /// Calls per minute per organization.
        #[arg(long)]
        rate_limit: Option<u32>,
        /// Calls (or cost units with --budget-unit cost) per period.
        #[arg(long)]
        budget: Option<f64>,
        #[arg(long, default_value = "calls")]
        budget_unit: String,
        /// minute, hour, day, week or month.
        #[arg(long, default_value = "day")]
        budget_period: String,
        /// Organizations allowed (repeat; none: every organization).
        #[arg(long = "org")]
        orgs: Vec<String>,
        /// Agents allowed (repeat; none: every agent).
        #[arg(long = "agent")]
        agents: Vec<String>,
        /// Cost of one call through the gateway against a cost budget (default 1).
        #[arg(long)]
        cost_per_call: Option<f64>,
        #[arg(long)]
        health_url: Option<String>,
        /// Why a tool screening blocked is approved all the same (required
        /// for such a tool; recorded in its review).
        #[arg(long = "override")]
        override_reason: Option<String>,
        /// A category the tool belongs to (`booking`; repeatable): what
        /// agents' profiles and goals name. Default: the manifest's, else
        /// one inferred from the curated tools it resembles.
        #[arg(long = "category")]
        categories: Vec<String>,
    },
    /// Reject, saying why.
    Reject {
        id: String,
        #[arg(long)]
        reason: String,
    },
}

/// The airlock for a command typed at this machine: without
/// `--source-root`, files under the current folder may be sources (the
/// operator names them; `serve` takes no such default, its callers are
/// remote).
fn open(g: &Global, args: &AirlockArgs) -> Result<Airlock> {
    let mut options = args.options();
    if options.reach.source_root.is_none() {
        options.reach.source_root = Some(std::env::current_dir()?);
    }
    g.open_airlock(options)
}

fn operator() -> String {
    std::env::var("USER").unwrap_or_else(|_| "cli".into())
}

fn line(i: &PendingTool) -> String {
    let status = serde_json::to_value(i.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let reasons: Vec<String> = i
        .reasons
        .iter()
        .map(|r| format!("{}: {}", r.code, r.message))
        .collect();
    format!(
        "{}  {:<9} {:<32} {}{}",
        i.id,
        status,
        i.name,
        i.source,
        if reasons.is_empty() {
            String::new()
        } else {
            format!("\n      {}", reasons.join("\n      "))
        }
    )
}

pub(crate) fn run(g: &Global, command: Command) -> Result<ExitCode> {
    match command {
        Command::Source { action, airlock } => source(&open(g, &airlock)?, action)?,
        Command::Pending { action, airlock } => pending(&open(g, &airlock)?, action)?,
        Command::Probe { airlock, json } => {
            let r = open(g, &airlock)?.probe()?;
            if json {
                print_json(&r)?;
            } else {
                for p in r {
                    println!(
                        "{}  {}  {:.0} ms{}{}",
                        p.tool,
                        if p.ok { "ok" } else { "FAILED" },
                        p.latency_ms,
                        p.error.map(|e| format!("  {e}")).unwrap_or_default(),
                        p.switched.map(|s| format!("  ({s})")).unwrap_or_default()
                    );
                }
            }
        }
        Command::Gaps {
            discover,
            airlock,
            json,
        } => {
            let a = open(g, &airlock)?;
            if discover {
                print_json(&a.discover_gaps()?)?;
            } else if json {
                print_json(&a.gaps())?;
            } else {
                for gap in a.gaps() {
                    println!("{:>5}  {}  {}", gap.count, gap.verb, gap.last_reason);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolgraph source …`.
fn source(a: &Airlock, action: SourceAction) -> Result<()> {
    match action {
        SourceAction::Add {
            kind,
            location,
            schedule,
            health_url,
            allow,
            scan,
        } => {
            let s = a.add_source(NewSource {
                kind,
                location,
                schedule_seconds: schedule,
                health_url,
                allow,
            })?;
            println!("added {} ({})", s.id, s.location);
            if scan {
                let r = a.scan(&s.id)?;
                println!(
                    "scanned: {} tools, {} new (pending review)",
                    r.discovered,
                    r.new.len()
                );
            }
        }
        SourceAction::List { json } => {
            let all = a.sources();
            if json {
                print_json(&all)?;
            } else {
                for s in all {
                    println!(
                        "{}  {:?}  {}  tools {}{}",
                        s.id,
                        s.kind,
                        s.location,
                        s.tools,
                        s.last_error
                            .map(|e| format!("  last error: {e}"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        SourceAction::Scan { id } => print_json(&a.scan(&id)?)?,
        SourceAction::Delete { id } => {
            a.delete_source(&id)?;
            println!("deleted {id}");
        }
    }
    Ok(())
}

/// `toolgraph pending …`.
fn pending(a: &Airlock, action: PendingAction) -> Result<()> {
    match action {
        PendingAction::List { status, json } => {
            let items: Vec<PendingTool> = match status.as_deref() {
                Some("all") => a.items(None),
                Some(s) => a.items(Some(s.parse::<Status>()?)),
                None => a
                    .items(None)
                    .into_iter()
                    .filter(|i| matches!(i.status, Status::Pending | Status::Changed))
                    .collect(),
            };
            if json {
                print_json(&items)?;
            } else {
                for i in &items {
                    println!("{}", line(i));
                }
            }
        }
        PendingAction::Show { id } => print_json(&a.item(&id)?)?,
        PendingAction::Approve {
            id,
            rate_limit,
            budget,
            budget_unit,
            budget_period,
            orgs,
            agents,
            cost_per_call,
            health_url,
            override_reason,
            categories,
        } => {
            let budget = match budget {
                Some(limit) => Some(Budget {
                    limit,
                    unit: parse_name::<BudgetUnit>(
                        Field::ApprovalBudget,
                        &budget_unit,
                        "calls or cost",
                    )?,
                    period: parse_name::<Period>(
                        Field::ApprovalBudget,
                        &budget_period,
                        "minute, hour, day, week or month",
                    )?,
                }),
                None => None,
            };
            let access = (!orgs.is_empty() || !agents.is_empty()).then_some(Grant { orgs, agents });
            let item = a.approve(
                &id,
                Approval {
                    rate_limit,
                    budget,
                    access,
                    cost_per_call,
                    health_url,
                    override_reason,
                    categories,
                },
                &operator(),
            )?;
            println!("approved: {}", line(&item));
        }
        PendingAction::Reject { id, reason } => {
            let item = a.reject(&id, &reason, &operator())?;
            println!("rejected: {}", line(&item));
        }
    }
    Ok(())
}
