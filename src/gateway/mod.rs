//! The call path: planners call tools through toolgraph, and every policy
//! is enforced at the call.
//!
//! One service for every transport (`POST /v1/call`, MCP `call_tool` and
//! proxied `tools/call`, `toolgraph call`). A call goes:
//! 1. **who may call it** — the engine's one layered filter
//!    ([`Engine::callable`]): a tool the caller cannot see answers exactly
//!    as an unknown tool;
//! 2. **where it goes** — the tool's upstream (an MCP server's tool, an
//!    HTTP operation; none: `no_upstream`);
//! 3. **the arguments** checked against the tool's input schema
//!    ([`validate`]): an error names the argument; nothing leaves;
//! 4. **approval** — a tool that requires it is held as an approval request
//!    ([`approvals`]) and runs once, only after an operator approves it;
//! 5. **credentials** of the caller's organization from the secrets file
//!    ([`secrets`]);
//! 6. **limits** checked and counted atomically ([`Engine::admit_call`]:
//!    switched off, rate limit, budget; counted in the store before the
//!    call leaves, so a crash never lets a limit be exceeded);
//! 7. **the upstream call** ([`upstream`]), bounded and pinned, no lock
//!    held; the answer size-capped and scrubbed of secrets;
//! 8. **outcomes**: the tool's health (consecutive failed calls switch it
//!    off as failed probes do; probes bring it back), an audit record
//!    ([`audit`]), webhooks ([`notify`]) on a switch-off and when a budget
//!    passes its soft limit, and the session's recently called tools.

pub mod approvals;
pub mod audit;
mod health;
pub mod notify;
pub mod secrets;
pub mod upstream;
pub mod validate;

use crate::airlock::fetch::Bounds;
use crate::airlock::reach::Reach;
use crate::engine::{Callable, Caller, Engine, UsageReport};
use crate::error::{CallFailure, Error, Field, Result};
use audit::{Audit, CallRecord, sha256};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use approvals::{ApprovalRequest, ApprovalStatus};
pub use health::ToolUsage;
pub use secrets::Secrets;

/// How the gateway calls.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// What upstreams may be reached (the airlock's: public addresses, and
    /// private ones the operator allowed).
    pub reach: Reach,
    /// Time and size limit of one upstream call.
    pub bounds: Bounds,
    /// Failed calls in a row that switch a tool off.
    pub fail_after: u32,
    /// Successful probes in a row that switch it back on.
    pub recover_after: u32,
    /// Keep arguments and results in audit records (hashes otherwise).
    pub audit_payloads: bool,
    /// The share of a budget that sends the spending alert (0.8).
    pub soft_limit: f64,
    /// Where webhooks go (switch-offs, spending alerts).
    pub notify: Option<String>,
    pub secrets: Secrets,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        Self {
            reach: Reach::default(),
            bounds: Bounds {
                timeout: Duration::from_secs(20),
                max_bytes: 1 << 20,
            },
            fail_after: 3,
            recover_after: 2,
            audit_payloads: false,
            soft_limit: 0.8,
            notify: None,
            secrets: Secrets::default(),
        }
    }
}

/// A call: the tool (name or id), its arguments, and who calls.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallRequest {
    pub tool: String,
    /// The tool's arguments (an object; its input schema says which).
    #[serde(default)]
    pub arguments: Value,
    #[serde(default)]
    pub caller: Caller,
}

/// What a call came to.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The upstream answered.
    Ok,
    /// The upstream answered that the call failed (`result` says how).
    Error,
    /// Held until an operator approves it (`approval`).
    PendingApproval,
}

/// The answer to a call.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CallAnswer {
    /// The audit record's id.
    pub call: String,
    pub tool: String,
    pub status: CallStatus,
    /// The upstream's answer (an MCP `CallToolResult`, or the HTTP body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_status: Option<u16>,
    pub duration_ms: f64,
    /// The approval request a held call waits in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// The organization's counters after this call (when anything counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageReport>,
}

/// The call path over one engine.
#[derive(Debug)]
pub struct Gateway {
    engine: Arc<Engine>,
    options: GatewayOptions,
    sessions: upstream::Sessions,
    audit: Audit,
    approvals: approvals::Approvals,
    health: health::Board,
    notifier: Option<notify::Notifier>,
    /// The airlock whose sources' own allowances widen the reach of their
    /// tools' calls (none: the operator's allowances alone).
    airlock: Option<Arc<crate::airlock::Airlock>>,
}

/// A call the gateway has admitted (the tool visible, arguments checked).
struct Admitted<'a> {
    caller: &'a Caller,
    callable: Callable,
    args: Map<String, Value>,
}

impl Gateway {
    /// The gateway over `engine`: reads the audit log's ids and the approval
    /// requests (one that was running when the process stopped is marked
    /// interrupted, never run again).
    pub fn open(engine: Arc<Engine>, options: GatewayOptions) -> Result<Self> {
        let audit = Audit::open(engine.store())?;
        let approvals = approvals::Approvals::open(engine.store())?;
        let notifier = options.notify.clone().map(notify::Notifier::start);
        Ok(Gateway {
            engine,
            options,
            sessions: upstream::Sessions::default(),
            audit,
            approvals,
            health: health::Board::default(),
            notifier,
            airlock: None,
        })
    }

    /// Calls to the tools of an airlock source may also reach the private
    /// hosts that source allows.
    pub fn with_airlock(mut self, airlock: Arc<crate::airlock::Airlock>) -> Self {
        self.airlock = Some(airlock);
        self
    }

    /// What a call to `tool` may reach: the operator's allowances, and its
    /// airlock source's own.
    fn reach_for(&self, tool: &crate::model::Tool) -> Reach {
        let source = tool
            .source
            .strip_prefix("airlock/")
            .and_then(|rest| rest.split('/').next());
        match (&self.airlock, source) {
            (Some(a), Some(id)) => match a.source(id) {
                Ok(s) => self.options.reach.with(&s.allow),
                Err(_) => self.options.reach.clone(),
            },
            _ => self.options.reach.clone(),
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Calls a tool for `req.caller` (see the module docs for the order).
    pub fn call(&self, req: &CallRequest) -> Result<CallAnswer> {
        let started = Instant::now();
        let caller = &req.caller;
        let admitted = self.admit(req);
        let admitted = match admitted {
            Ok(a) => a,
            Err(e) => {
                self.record_refusal(req, &e, started);
                return Err(e);
            }
        };
        if admitted.callable.requires_approval {
            let held = self.approvals.hold(
                self.engine.store(),
                &admitted.callable.tool.name,
                Value::Object(admitted.args.clone()),
                caller,
            )?;
            let record = self.record(
                &admitted,
                "held",
                None,
                None,
                None,
                started,
                Some(held.id.clone()),
            );
            return Ok(CallAnswer {
                call: record,
                tool: admitted.callable.tool.name.clone(),
                status: CallStatus::PendingApproval,
                result: None,
                upstream_status: None,
                duration_ms: ms(started),
                approval: Some(held.id),
                usage: None,
            });
        }
        self.run(&admitted, started, None)
    }

    /// Steps 1–3: the tool as the caller may see it, its arguments
    /// checked, an upstream to call.
    fn admit<'a>(&self, req: &'a CallRequest) -> Result<Admitted<'a>> {
        if req.tool.trim().is_empty() || req.tool.len() > crate::policy::MAX_NAME {
            return Err(Error::invalid_field(
                Field::CallTool,
                format!(
                    "a call names its tool (1 to {} bytes)",
                    crate::policy::MAX_NAME
                ),
            ));
        }
        let callable = self.engine.callable(&req.caller, &req.tool)?;
        if callable.tool.upstream.is_none() {
            return Err(Error::call(
                CallFailure::NoUpstream,
                format!(
                    "`{}` has no upstream: it was registered without one (an MCP or OpenAPI source in the airlock, or `upstream` in its manifest)",
                    callable.tool.name
                ),
            ));
        }
        let args = validate::arguments(&callable.tool, &req.arguments)?;
        Ok(Admitted {
            caller: &req.caller,
            callable,
            args,
        })
    }

    /// Steps 5–8 for an admitted call (an approved one names its request).
    fn run(&self, a: &Admitted, started: Instant, approval: Option<String>) -> Result<CallAnswer> {
        let tool = &a.callable.tool;
        let Some(upstream) = tool.upstream.as_deref() else {
            return Err(Error::call(
                CallFailure::NoUpstream,
                format!("`{}` has no upstream", tool.name),
            ));
        };
        let secret = upstream.auth().and_then(|auth| {
            self.options
                .secrets
                .get(a.callable.org_name(), &auth.secret)
        });
        let outcome = (|| {
            // Refused before anything is counted or sent.
            if let (Some(auth), None) = (upstream.auth(), secret) {
                return Err(upstream::missing_secret(auth));
            }
            let usage = self.engine.admit_call(&a.callable)?;
            if let Some(u) = &usage {
                self.alert_budget(&a.callable, u);
            }
            let called = Instant::now();
            let reach = self.reach_for(tool);
            let answer = upstream::call(
                upstream,
                a.args.clone(),
                secret,
                &self.sessions,
                self.options.bounds,
                &reach,
            );
            let latency = ms(called);
            let answer = answer.and_then(|x| checked_output(upstream, x));
            let ok = matches!(&answer, Ok(x) if !x.failed);
            let why = match &answer {
                Ok(x) if x.failed => Some(match x.status {
                    Some(s) => format!("HTTP {s}"),
                    None => "the tool answered isError".to_string(),
                }),
                Ok(_) => None,
                Err(e) => Some(self.options.secrets.scrub(&e.to_string())),
            };
            self.health_outcome(tool, &reach, ok, latency, why.as_deref())?;
            answer.map(|x| (x, usage))
        })();
        match outcome {
            Ok((mut answer, usage)) => {
                self.options.secrets.scrub_json(&mut answer.result);
                let status = if answer.failed { "error" } else { "ok" };
                let call = self.record(
                    a,
                    status,
                    None,
                    answer.status,
                    Some(&answer.result),
                    started,
                    approval.clone(),
                );
                self.engine.called(a.caller, &tool.name);
                Ok(CallAnswer {
                    call,
                    tool: tool.name.clone(),
                    status: if answer.failed {
                        CallStatus::Error
                    } else {
                        CallStatus::Ok
                    },
                    result: Some(answer.result),
                    upstream_status: answer.status,
                    duration_ms: ms(started),
                    approval,
                    usage,
                })
            }
            Err(e) => {
                let e = self.scrubbed(e);
                let status = match &e {
                    Error::Call {
                        failure:
                            CallFailure::Upstream | CallFailure::UpstreamTimeout | CallFailure::Output,
                        ..
                    } => "error",
                    _ => "refused",
                };
                self.record(a, status, Some(code_of(&e)), None, None, started, approval);
                Err(e)
            }
        }
    }

    /// An error with any secret an upstream echoed taken out.
    fn scrubbed(&self, e: Error) -> Error {
        match e {
            Error::Call { failure, message } => Error::Call {
                failure,
                message: self.options.secrets.scrub(&message),
            },
            other => other,
        }
    }

    /// Writes the audit record of an admitted call; returns its id.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        a: &Admitted,
        status: &str,
        code: Option<&str>,
        upstream_status: Option<u16>,
        result: Option<&Value>,
        started: Instant,
        approval: Option<String>,
    ) -> String {
        let args = Value::Object(a.args.clone());
        self.write_record(
            a.caller,
            &a.callable.tool.name,
            status,
            code,
            upstream_status,
            &args,
            result,
            started,
            approval,
        )
    }

    /// Audits a call refused before it was admitted (unknown tool, bad
    /// arguments, no upstream).
    fn record_refusal(&self, req: &CallRequest, e: &Error, started: Instant) {
        self.write_record(
            &req.caller,
            &req.tool
                .chars()
                .take(crate::policy::MAX_NAME)
                .collect::<String>(),
            "refused",
            Some(code_of(e)),
            None,
            &req.arguments,
            None,
            started,
            None,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn write_record(
        &self,
        caller: &Caller,
        tool: &str,
        status: &str,
        code: Option<&str>,
        upstream_status: Option<u16>,
        args: &Value,
        result: Option<&Value>,
        started: Instant,
        approval: Option<String>,
    ) -> String {
        let at = crate::policy::limits::now();
        let id = self.audit.new_id(at);
        let keep = self.options.audit_payloads;
        let record = CallRecord {
            id: id.clone(),
            at,
            tool: tool.to_string(),
            key: caller.key.clone(),
            org: caller.org.clone(),
            agent: caller.agent.clone(),
            session: caller.session.clone(),
            status: status.to_string(),
            code: code.map(str::to_string),
            upstream_status,
            duration_ms: ms(started),
            arguments_sha256: sha256(args),
            result_sha256: result.map(sha256),
            arguments: keep.then(|| args.clone()),
            result: if keep { result.cloned() } else { None },
            approval,
        };
        if let Err(e) = self.audit.write(self.engine.store(), &record) {
            tracing::error!(error = %e, call = %id, "cannot write a call's audit record");
        }
        id
    }

    /// Audit records, newest first (operators).
    pub fn calls(
        &self,
        tool: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<CallRecord>, usize)> {
        if limit == 0 || limit > MAX_PAGE {
            return Err(Error::invalid_field(
                Field::CallsLimit,
                format!("limit is 1 to {MAX_PAGE}"),
            ));
        }
        self.audit.page(self.engine.store(), tool, offset, limit)
    }
}

/// A successful answer checked against the upstream's declared output
/// schema (an MCP tool's `structuredContent`, an HTTP operation's JSON
/// body); one that breaks it is the upstream's fault (`upstream_output_invalid`).
fn checked_output(
    up: &crate::model::Upstream,
    answer: upstream::Answer,
) -> Result<upstream::Answer> {
    let Some(schema) = up.output_schema() else {
        return Ok(answer);
    };
    if answer.failed {
        return Ok(answer);
    }
    let checked = match up {
        crate::model::Upstream::Mcp { .. } => answer.result.get("structuredContent"),
        crate::model::Upstream::Http { .. } => Some(&answer.result),
    };
    let verdict = match checked {
        Some(v) => validate::output(schema, v),
        None => Err("/: no structured content, though the tool declares an output schema".into()),
    };
    match verdict {
        Ok(()) => Ok(answer),
        Err(why) => Err(Error::call(
            CallFailure::Output,
            format!("the upstream's answer breaks its declared output schema at {why}"),
        )),
    }
}

/// Records one page of a listing holds at most.
pub const MAX_PAGE: usize = 500;

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1e5).round() / 100.0
}

/// The stable code of an error (as the wire names it).
fn code_of(e: &Error) -> &'static str {
    match e {
        Error::Call { failure, .. } => failure.code(),
        Error::NotFound { kind, .. } => kind.code(),
        Error::Invalid { field: Some(f), .. } => f.code(),
        Error::Forbidden(_) => "forbidden",
        Error::Timeout(_) => "timeout",
        _ => "invalid_request",
    }
}
