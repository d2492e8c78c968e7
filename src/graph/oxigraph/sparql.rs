//! Reading: parsed queries with VALUES bound structurally, result rows,
//! and the read-only SPARQL users send.

use super::{OxigraphStore, nn};
use crate::error::{Error, Result};
use crate::graph::{Sparql, SparqlOutput};
use oxigraph::model::Term;
use oxigraph::sparql::{CancellationToken, QueryResults, SparqlEvaluator};
use spargebra::algebra::GraphPattern;
use spargebra::term::GroundTerm;
use std::collections::HashMap;
use std::time::Duration;

pub(super) fn sparql_err(e: impl Into<crate::error::BoxError>) -> Error {
    Error::sparql("a query failed", e)
}

/// Wraps the innermost pattern of a parsed query in a join with a VALUES
/// table, so request values are bound structurally, never pasted as text.
pub(super) fn bind_values(query: &str, var: &str, iris: &[String]) -> Result<spargebra::Query> {
    let mut parsed = spargebra::SparqlParser::new()
        .parse_query(query)
        .map_err(sparql_err)?;
    let variable = spargebra::term::Variable::new(var).map_err(sparql_err)?;
    let mut bindings = Vec::with_capacity(iris.len());
    for iri in iris {
        bindings.push(vec![Some(GroundTerm::NamedNode(nn(iri)?))]);
    }
    let values = GraphPattern::Values {
        variables: vec![variable],
        bindings,
    };
    let pattern = match &mut parsed {
        spargebra::Query::Select { pattern, .. }
        | spargebra::Query::Construct { pattern, .. }
        | spargebra::Query::Describe { pattern, .. }
        | spargebra::Query::Ask { pattern, .. } => pattern,
    };
    inject(pattern, values);
    Ok(parsed)
}

/// Pushes the VALUES table down to where it binds: through solution
/// modifiers, into every UNION branch, and under BIND/FILTER, so each branch
/// starts from the bound nodes instead of scanning the whole graph.
pub(super) fn inject(pattern: &mut GraphPattern, values: GraphPattern) {
    match pattern {
        GraphPattern::Project { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::OrderBy { inner, .. }
        | GraphPattern::Group { inner, .. }
        | GraphPattern::Extend { inner, .. }
        | GraphPattern::Filter { inner, .. } => inject(inner, values),
        GraphPattern::Union { left, right } => {
            inject(left, values.clone());
            inject(right, values);
        }
        other => {
            let right = std::mem::replace(other, GraphPattern::Bgp { patterns: vec![] });
            *other = GraphPattern::Join {
                left: Box::new(values),
                right: Box::new(right),
            };
        }
    }
}

pub(super) fn term_str(t: &Term) -> String {
    match t {
        Term::NamedNode(n) => n.as_str().to_string(),
        Term::BlankNode(b) => format!("_:{}", b.as_str()),
        Term::Literal(l) => l.value().to_string(),
        #[allow(unreachable_patterns)]
        other => other.to_string(),
    }
}

pub(super) type Rows = Vec<HashMap<String, String>>;

pub(super) fn collect_rows(results: QueryResults<'_>) -> Result<Rows> {
    let QueryResults::Solutions(solutions) = results else {
        return Err(Error::sparql_msg("expected a SELECT query"));
    };
    let mut rows = Vec::new();
    for solution in solutions {
        let solution = solution.map_err(sparql_err)?;
        let mut row = HashMap::new();
        for (var, term) in solution.iter() {
            row.insert(var.as_str().to_string(), term_str(term));
        }
        rows.push(row);
    }
    Ok(rows)
}

pub(super) fn prepared(query: spargebra::Query) -> oxigraph::sparql::PreparedSparqlQuery {
    prepared_with(query, None)
}

/// The query over the union of all graphs, cancellable with `token`.
fn prepared_with(
    query: spargebra::Query,
    token: Option<CancellationToken>,
) -> oxigraph::sparql::PreparedSparqlQuery {
    // Built without oxigraph's http-client feature: SERVICE calls fail
    // instead of reaching the network.
    let mut evaluator = SparqlEvaluator::new();
    if let Some(t) = token {
        evaluator = evaluator.with_cancellation_token(t);
    }
    let mut q = evaluator.for_query(query);
    q.dataset_mut().set_default_graph_as_union();
    q
}

pub(super) fn parse_fixed(query: &str) -> Result<spargebra::Query> {
    spargebra::SparqlParser::new()
        .parse_query(query)
        .map_err(sparql_err)
}

/// Cancels a query's token when `limit` passes before the query ends.
struct Watchdog {
    done: Option<std::sync::mpsc::Sender<()>>,
}

impl Watchdog {
    fn start(token: CancellationToken, limit: Duration) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                token.cancel();
            }
        });
        Self { done: Some(tx) }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send(());
        }
    }
}

impl Sparql for OxigraphStore {
    fn query_within(&self, query: &str, limit: Option<Duration>) -> Result<SparqlOutput> {
        let parsed = match spargebra::SparqlParser::new().parse_query(query) {
            Ok(q) => q,
            Err(e) => {
                if spargebra::SparqlParser::new().parse_update(query).is_ok() {
                    return Err(Error::invalid_field(
                        crate::error::Field::SparqlQuery,
                        "refused: SPARQL updates are not allowed here (the sparql command is read-only; use `toolgraph load`)",
                    ));
                }
                return Err(Error::invalid_field(
                    crate::error::Field::SparqlQuery,
                    e.to_string(),
                ));
            }
        };
        let token = CancellationToken::new();
        let _watchdog = limit.map(|l| Watchdog::start(token.clone(), l));
        let timed_out = |e: &oxigraph::sparql::QueryEvaluationError| {
            if token.is_cancelled() {
                return Error::Timeout(format!(
                    "the query ran longer than {:.1} s and was cancelled",
                    limit.map_or(0.0, |l| l.as_secs_f32())
                ));
            }
            // The user's query asked for something this endpoint does not
            // do: that is the request's fault (400), not the server's.
            if let oxigraph::sparql::QueryEvaluationError::UnsupportedService(service) = e {
                return Error::invalid_field(
                    crate::error::Field::SparqlQuery,
                    format!(
                        "SERVICE {service} is refused: this endpoint queries only its own store"
                    ),
                );
            }
            sparql_err(e.to_string())
        };
        let results = prepared_with(parsed, Some(token.clone()))
            .on_store(&self.store)
            .execute()
            .map_err(|e| timed_out(&e))?;
        match results {
            QueryResults::Boolean(b) => Ok(SparqlOutput::Boolean(b)),
            QueryResults::Graph(triples) => {
                let mut lines = Vec::new();
                for t in triples {
                    lines.push(format!("{} .", t.map_err(|e| timed_out(&e))?));
                }
                Ok(SparqlOutput::Graph(lines))
            }
            QueryResults::Solutions(solutions) => {
                let vars: Vec<String> = solutions
                    .variables()
                    .iter()
                    .map(|v| v.as_str().to_string())
                    .collect();
                let mut rows = Vec::new();
                for solution in solutions {
                    let solution = solution.map_err(|e| timed_out(&e))?;
                    rows.push(
                        vars.iter()
                            .map(|v| solution.get(v.as_str()).map(|t| t.to_string()))
                            .collect(),
                    );
                }
                Ok(SparqlOutput::Solutions { vars, rows })
            }
        }
    }
}
