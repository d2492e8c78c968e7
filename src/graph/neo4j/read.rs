//! A replica's read of the whole catalog: the server's statements
//! (relationships, then the statements held as their subjects' properties)
//! streamed into a new mirror as they arrive. The driver parses rows on the
//! runtime's thread while a thread of its own checks each chunk's IRIs (on
//! every core) and inserts it into the mirror, so the server's work, the
//! driver's and the mirror's build overlap instead of following each other
//! (100k tools: 3.1M statements; read, then decoded and inserted, the two
//! last steps took 33 of a 61 s read).

use super::codec::{self, Object, Statement, decode};
use super::{Mirror, Neo4jStore, Q_LITERALS, Q_STATEMENTS, bolt_err, cypher};
use crate::error::{Error, Result};
use crate::graph::oxigraph::{OxigraphStore, STATE_GRAPH};
use oxigraph::model::{NamedNode, Quad};
use rayon::prelude::*;
use std::sync::PoisonError;
use std::sync::mpsc::{SyncSender, sync_channel};

/// Statements per chunk handed from the driver to the mirror's builder.
const CHUNK: usize = 8_192;
/// Chunks that may wait for the builder before the driver waits.
const IN_FLIGHT: usize = 8;

impl Neo4jStore {
    /// Rebuilds the mirror from the server (a consistent read: retried when
    /// the version moved while reading) and notes what differs from before.
    pub(super) fn reload(&self) -> Result<()> {
        for _ in 0..5 {
            let before = self.server_version()?;
            let t = std::time::Instant::now();
            let (store, legacy) = self.read_store()?;
            tracing::debug!(
                "bolt: statements read into a new mirror in {:?}",
                t.elapsed()
            );
            if self.server_version()? != before {
                continue;
            }
            let mut mirror = self.mirror.write().unwrap_or_else(PoisonError::into_inner);
            // Statements in the state graph are an earlier toolgraph's
            // records, on their way to record nodes.
            let state = NamedNode::new_unchecked(STATE_GRAPH);
            let (catalog, records) = store.differs_from(&mirror.store, &state)?;
            *mirror = Mirror {
                store,
                version: before,
                legacy,
            };
            let mut unreported = self
                .unreported
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            unreported.catalog |= catalog;
            unreported.records |= records;
            return Ok(());
        }
        Err(Error::Conflict(
            "the graph server's catalog kept changing while it was read; try again".into(),
        ))
    }

    /// Every statement on the server as a new mirror store, and how many
    /// were still in an earlier layout (`(:Literal)` nodes, `TYPE`
    /// relationships to a labelled class).
    fn read_store(&self) -> Result<(OxigraphStore, usize)> {
        let (chunks, received) = sync_channel::<Vec<Statement>>(IN_FLIGHT);
        std::thread::scope(|scope| {
            let builder = scope.spawn(move || {
                OxigraphStore::from_chunks(
                    received
                        .into_iter()
                        .map(|chunk| chunk.par_iter().map(decode).collect::<Result<Vec<Quad>>>()),
                )
            });
            let streamed = self.stream_statements(&chunks);
            drop(chunks);
            let built = builder
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            // A statement the builder refused stops it, and then the
            // stream: the builder's error names the statement.
            let store = built?;
            Ok((store, streamed?))
        })
    }

    /// Sends the server's statements in chunks; how many were in an
    /// earlier layout.
    fn stream_statements(&self, chunks: &SyncSender<Vec<Statement>>) -> Result<usize> {
        let stopped = || Error::store_msg("the mirror's builder stopped reading the statements");
        let mut chunk = Vec::with_capacity(CHUNK);
        let send = |chunk: &mut Vec<Statement>, st: Statement| {
            chunk.push(st);
            if chunk.len() >= CHUNK {
                let full = std::mem::replace(chunk, Vec::with_capacity(CHUNK));
                chunks.send(full).map_err(|_| stopped())?;
            }
            Ok::<_, Error>(())
        };
        let server = &self.server;
        self.block(async {
            let mut legacy = 0;
            let mut rows = self
                .graph
                .execute(neo4rs::query(&cypher(Q_STATEMENTS)))
                .await
                .map_err(|e| bolt_err(server, e))?;
            while let Some(row) = rows.next().await.map_err(|e| bolt_err(server, e))? {
                let text = |c: &str| row.get::<Option<String>>(c).unwrap_or(None);
                let (st, old) =
                    relationship(["s", "p", "t", "g", "o", "v", "dt", "lang"].map(text))?;
                legacy += usize::from(old);
                send(&mut chunk, st)?;
            }
            let mut rows = self
                .graph
                .execute(neo4rs::query(&cypher(Q_LITERALS)))
                .await
                .map_err(|e| bolt_err(server, e))?;
            while let Some(row) = rows.next().await.map_err(|e| bolt_err(server, e))? {
                let de = |e| bolt_err(server, neo4rs::Error::DeserializationError(e));
                let list = |c: &str| row.get::<Vec<String>>(c).map_err(de);
                let s: String = row.get("s").map_err(de)?;
                let columns = [
                    list("p")?,
                    list("g")?,
                    list("v")?,
                    list("dt")?,
                    list("lang")?,
                ];
                for st in held_as_properties(s, columns)? {
                    send(&mut chunk, st)?;
                }
            }
            if !chunk.is_empty() {
                chunks.send(chunk).map_err(|_| stopped())?;
            }
            Ok(legacy)
        })
    }
}

/// One relationship row (`statements.cypher`: s, p, t, g, o, v, dt, lang)
/// as a statement, and whether it is in an earlier layout.
pub(super) fn relationship(mut r: [Option<String>; 8]) -> Result<(Statement, bool)> {
    let mut take = |i: usize| r[i].take().unwrap_or_default();
    let s = take(0);
    // A listed type names its predicate (`p` kept only on a STATEMENT, and
    // by toolgraph before 2026-12).
    let p = match take(1) {
        p if !p.is_empty() => p,
        _ => {
            let t = take(2);
            codec::predicate_of(&t).map(str::to_string).ok_or_else(|| {
                Error::store_msg(format!(
                    "a `{t}` relationship from `{s}` on the graph server has no predicate `p`"
                ))
            })?
        }
    };
    let g = take(3);
    let (object, legacy) = match take(4) {
        // A type an earlier toolgraph wrote as a relationship.
        o if !o.is_empty() && p == crate::vocab::RDF_TYPE && codec::labelled(&o) => {
            (Object::Class(o), true)
        }
        o if !o.is_empty() => (Object::Resource(o), false),
        // A literal node an earlier toolgraph wrote (moved at connect).
        _ => (
            Object::Literal {
                value: take(5),
                dt: take(6),
                lang: take(7),
            },
            true,
        ),
    };
    let st = Statement {
        k: String::new(),
        s,
        p,
        g,
        object,
    };
    Ok((st, legacy))
}

/// A subject's statements held as its properties: parallel lists of
/// predicate, graph, value, datatype and language.
pub(super) fn held_as_properties(s: String, columns: [Vec<String>; 5]) -> Result<Vec<Statement>> {
    let n = columns[0].len();
    if columns.iter().any(|c| c.len() != n) {
        return Err(Error::store_msg(format!(
            "the graph server's literal lists of `{s}` differ in length"
        )));
    }
    let [p, g, v, dt, lang] = columns;
    Ok(p.into_iter()
        .zip(g)
        .zip(v)
        .zip(dt)
        .zip(lang)
        .map(|((((p, g), value), dt), lang)| {
            let object = if dt == codec::CLASS_DATATYPE {
                Object::Class(value)
            } else {
                Object::Literal { value, dt, lang }
            };
            Statement {
                k: String::new(),
                s: s.clone(),
                p,
                g,
                object,
            }
        })
        .collect())
}
