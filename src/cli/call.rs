//! `toolgraph call TOOL --args JSON`: a call through the gateway from this
//! machine (the same service `POST /v1/call` and MCP `call_tool` use), and
//! the gateway's options `serve` shares.

use super::{Global, print_json};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use toolgraph::airlock::fetch::Bounds;
use toolgraph::engine::Caller;
use toolgraph::gateway::{CallRequest, CallStatus, Gateway, GatewayOptions, Secrets};

/// How calls go (`serve` and `call`).
#[derive(Args, Debug, Clone)]
pub(crate) struct GatewayArgs {
    /// Upstream credentials per organization (JSON; refused unless mode 0600):
    /// {"acme": {"petstore": "sk-…", "github": {"env": "VAR"}}, "*": {…}}.
    #[arg(long, env = "TOOLGRAPH_SECRETS")]
    secrets: Option<PathBuf>,
    /// A URL that receives webhooks: a tool switched off or back on, a
    /// budget past its soft limit.
    #[arg(long)]
    notify: Option<String>,
    /// The share of a budget that sends the spending alert.
    #[arg(long, default_value_t = 0.8)]
    soft_limit: f64,
    /// Keep arguments and results in the audit log (hashes otherwise).
    #[arg(long)]
    audit_payloads: bool,
    /// Seconds one upstream call may take.
    #[arg(long, default_value_t = 20)]
    call_timeout: u64,
    /// Bytes of one upstream answer at most.
    #[arg(long, default_value_t = 1 << 20)]
    call_max_bytes: u64,
}

impl GatewayArgs {
    pub(crate) fn options(&self) -> Result<GatewayOptions> {
        let secrets = match &self.secrets {
            Some(p) => Secrets::load(p)?,
            None => Secrets::default(),
        };
        if !(self.soft_limit.is_finite() && (0.0..=1.0).contains(&self.soft_limit)) {
            anyhow::bail!("--soft-limit is a share from 0 to 1");
        }
        Ok(GatewayOptions {
            bounds: Bounds {
                timeout: Duration::from_secs(self.call_timeout.max(1)),
                max_bytes: self.call_max_bytes,
            },
            audit_payloads: self.audit_payloads,
            soft_limit: self.soft_limit,
            notify: self.notify.clone(),
            secrets,
            ..GatewayOptions::default()
        })
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Call a tool through toolgraph: the caller's policy, the tool's input
    /// schema, limits and approval are enforced as over HTTP.
    Call {
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long = "args", default_value = "{}")]
        arguments: String,
        #[command(flatten)]
        caller: Caller,
        #[command(flatten)]
        gateway: GatewayArgs,
        #[command(flatten)]
        airlock: super::airlock::AirlockArgs,
    },
}

pub(crate) fn run(g: &Global, command: Command) -> Result<ExitCode> {
    let Command::Call {
        tool,
        arguments,
        caller,
        gateway,
        airlock,
    } = command;
    let arguments: serde_json::Value =
        serde_json::from_str(&arguments).map_err(|e| anyhow::anyhow!("--args: not JSON: {e}"))?;
    let engine = Arc::new(g.open(true)?);
    engine.require_catalog()?;
    let reach = airlock.options().reach;
    let gw = Gateway::open(
        engine,
        GatewayOptions {
            reach,
            ..gateway.options()?
        },
    )?;
    let answer = gw.call(&CallRequest {
        tool,
        arguments,
        caller,
    })?;
    print_json(&answer)?;
    Ok(match answer.status {
        CallStatus::Ok | CallStatus::PendingApproval => ExitCode::SUCCESS,
        CallStatus::Error => ExitCode::FAILURE,
    })
}
