//! Records on the graph server: `(:Record {kind, id, json})` nodes beside
//! the catalog. A records write is one small transaction that counts
//! itself on `(:Records {version})`; it never diffs the catalog mirror nor
//! moves the catalog's version, so recording a call or a review does not
//! make every replica rebuild its snapshot. Replicas see records writes
//! through that counter (`Synced::records`).

use super::{Neo4jStore, cypher};
use crate::error::Result;
use crate::graph::oxigraph::STATE_GRAPH;
use neo4rs::BoltType;
use oxigraph::model::GraphName;
use std::collections::HashMap;
use std::sync::PoisonError;

const Q_RECORDS: &str = include_str!("../../../queries/cypher/records.cypher");
const Q_PUT_RECORDS: &str = include_str!("../../../queries/cypher/put_records.cypher");
const Q_DELETE_RECORDS: &str = include_str!("../../../queries/cypher/delete_records.cypher");
const Q_BUMP_RECORDS: &str = include_str!("../../../queries/cypher/bump_records.cypher");
const Q_RECORDS_VERSION: &str = include_str!("../../../queries/cypher/records_version.cypher");

/// Records per `UNWIND` batch.
const RECORD_BATCH: usize = 1_000;

impl Neo4jStore {
    /// The records of one kind, read from the server.
    pub(super) fn read_records(&self, kind: &str) -> Result<Vec<(String, String)>> {
        let rows = self.fetch(
            neo4rs::query(&cypher(Q_RECORDS)).param("kind", kind),
            &["id", "json"],
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|mut r| Some((r[0].take()?, r[1].take()?)))
            .collect())
    }

    /// Writes records of one kind in one transaction.
    pub(super) fn write_records(
        &self,
        kind: &str,
        records: &[(String, Option<String>)],
    ) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut queries = vec![neo4rs::query(&cypher(Q_BUMP_RECORDS))];
        let put: Vec<HashMap<String, BoltType>> = records
            .iter()
            .filter_map(|(id, json)| {
                Some(HashMap::from([
                    ("id".to_string(), BoltType::from(id.as_str())),
                    ("json".to_string(), BoltType::from(json.as_deref()?)),
                ]))
            })
            .collect();
        let gone: Vec<String> = records
            .iter()
            .filter(|(_, json)| json.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        for chunk in put.chunks(RECORD_BATCH) {
            queries.push(
                neo4rs::query(&cypher(Q_PUT_RECORDS))
                    .param("kind", kind)
                    .param("rows", chunk.to_vec()),
            );
        }
        for chunk in gone.chunks(RECORD_BATCH) {
            queries.push(
                neo4rs::query(&cypher(Q_DELETE_RECORDS))
                    .param("kind", kind)
                    .param("ids", chunk.to_vec()),
            );
        }
        let version = self
            .block(async {
                let mut txn = self.graph.start_txn().await?;
                let mut version = None;
                for (i, q) in queries.into_iter().enumerate() {
                    if i == 0 {
                        let mut stream = match txn.execute(q).await {
                            Ok(s) => s,
                            Err(e) => {
                                let _ = txn.rollback().await;
                                return Err(e);
                            }
                        };
                        while let Some(row) = stream.next(txn.handle()).await? {
                            version = row.get::<i64>("version").ok();
                        }
                    } else if let Err(e) = txn.run(q).await {
                        let _ = txn.rollback().await;
                        return Err(e);
                    }
                }
                txn.commit().await?;
                Ok::<_, neo4rs::Error>(version)
            })
            .map_err(|e| super::bolt_err(&self.server, e))?;
        // Another replica wrote records since this one last looked: what it
        // wrote must be read again.
        let mut known = self
            .records_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = version {
            if v != *known + 1 {
                self.unreported
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .records = true;
            }
            *known = v;
        }
        Ok(())
    }

    /// How many records writes the server has seen.
    fn records_version(&self) -> Result<i64> {
        let rows = self.fetch(neo4rs::query(&cypher(Q_RECORDS_VERSION)), &["version"])?;
        Ok(rows
            .first()
            .and_then(|r| r[0].as_deref())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// Notes when another replica wrote records since this one last looked.
    pub(super) fn catch_up_records(&self) -> Result<()> {
        let now = self.records_version()?;
        let mut known = self
            .records_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if now != *known {
            self.unreported
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .records = true;
            *known = now;
        }
        Ok(())
    }

    /// Records an earlier toolgraph kept as catalog statements (graph
    /// `urn:toolgraph:state`) become record nodes, once, and leave the
    /// catalog.
    pub(super) fn move_legacy_records(&self) -> Result<()> {
        let legacy: Vec<(String, String, String)> = self.read(|m| m.all_records())?;
        if legacy.is_empty() {
            return Ok(());
        }
        tracing::info!(
            records = legacy.len(),
            "moving records out of the catalog's statements"
        );
        let mut by_kind: HashMap<&str, Vec<(String, Option<String>)>> = HashMap::new();
        for (kind, id, json) in &legacy {
            by_kind
                .entry(kind.as_str())
                .or_default()
                .push((id.clone(), Some(json.clone())));
        }
        for (kind, rows) in by_kind {
            self.write_records(kind, &rows)?;
        }
        let state = oxigraph::model::NamedNode::new_unchecked(STATE_GRAPH);
        self.mutate(Some(std::slice::from_ref(&state)), |m| {
            m.drop_graph(&GraphName::NamedNode(state.clone()))
        })
    }
}
