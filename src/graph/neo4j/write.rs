//! A difference of statements to the server, in one transaction that first
//! takes the catalog's version: relationships deleted by statement key, new
//! typed resources created with their labels, then one row per touched
//! subject in batches (each batch's parameters built as it is sent): its new
//! relationships and, when its literal statements changed, all of them set
//! again as its properties from the mirror as the write leaves it; labels
//! and orphans only where the difference touched. (Deleting through the
//! subject's index instead of the key alone missed statements on ArcadeDB:
//! 2 of 11.7k, in 2 of 3 contract-suite runs, so the delete still reads
//! every relationship.)

use super::codec::{
    LABELS, OTHER_PREDICATE, Object, Statement, SubjectWrite, encode, encode_unkeyed,
    held_as_property, parse_node, subject_batches, subject_rows,
};
use super::diff::Difference;
use super::{
    BATCH, Neo4jStore, Q_BUMP, Q_CHECKED, Q_CREATE, Q_CREATE_LINK, Q_CREATE_STATEMENT, Q_DELETE,
    Q_KNOWN_OBJECTS, Q_LABEL, Q_LABEL_NEW, Q_LEGACY_LITERALS, Q_LEGACY_TYPES, Q_ORPHANS,
    Q_SUBJECTS, Q_SUBJECTS_BY_ID, Q_UNLABEL, bolt_err, cypher, with_identifier,
};
use crate::error::{Error, Result};
use crate::graph::oxigraph::OxigraphStore;
use neo4rs::Query;
use oxigraph::model::{Quad, Term};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

impl Neo4jStore {
    /// Writes a difference in one transaction with the version check;
    /// `now` is the mirror with the difference applied.
    pub(super) fn write(
        &self,
        difference: &Difference,
        expected: i64,
        now: &OxigraphStore,
    ) -> Result<i64> {
        // On both cores: the server waits for it (3.1M statements at 100k).
        let encoded =
            |quads: &[Quad]| -> Result<Vec<Statement>> { quads.par_iter().map(encode).collect() };
        let t = std::time::Instant::now();
        let (removed, added) = rayon::join(
            || encoded(&difference.removed),
            || encoded(&difference.added),
        );
        let (removed, added) = (removed?, added?);
        let queries = difference_queries(&removed, &added, &difference.new_typed, now)?;
        tracing::debug!("bolt: write encoded and batched in {:?}", t.elapsed());
        self.transact(queries, expected, now)
    }

    /// Moves statements an earlier toolgraph held otherwise (counted by the
    /// last read: literal ones as `(:Literal)` nodes, types of labelled
    /// classes as `TYPE` relationships) into their subjects' properties, in
    /// one write: every subject with a property statement in the mirror is
    /// written again, then the old nodes and relationships go.
    pub(super) fn move_legacy_statements(&self) -> Result<()> {
        let _writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut attempt = 0;
        loop {
            match self.move_legacy_statements_once() {
                Err(Error::Conflict(why)) if attempt < super::CONFLICT_RETRIES => {
                    attempt += 1;
                    tracing::info!(attempt, %why, "another replica wrote while old statements were moved; again");
                    self.catch_up()?;
                }
                other => return other,
            }
        }
    }

    fn move_legacy_statements_once(&self) -> Result<()> {
        let mut mirror = self
            .mirror
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if mirror.legacy == 0 {
            return Ok(());
        }
        tracing::info!(
            statements = mirror.legacy,
            "moving literal nodes and type relationships into their subjects' properties"
        );
        let held: Vec<Statement> = mirror
            .store
            .all_quads()?
            .iter()
            .filter(|q| held_as_property(q))
            .map(encode_unkeyed)
            .collect::<Result<_>>()?;
        let classes: Vec<String> = LABELS.iter().map(|(c, _)| c.to_string()).collect();
        let mut queries = vec![
            Pending::Send(Outgoing::Run(neo4rs::query(&cypher(Q_LEGACY_LITERALS)))),
            Pending::Send(Outgoing::Run(
                neo4rs::query(&cypher(Q_LEGACY_TYPES)).param("classes", classes),
            )),
        ];
        queries.extend(
            subject_batches(&[], &held, BATCH)
                .into_iter()
                .map(Pending::Subjects),
        );
        let version = self.transact(queries, mirror.version, &mirror.store)?;
        mirror.version = version;
        mirror.legacy = 0;
        Ok(())
    }

    /// Runs a write's queries in one transaction after the version check.
    /// Each batch's parameters are built on a thread of their own while the
    /// server runs the batch before (two at most wait to be sent); the
    /// first batch waits for the node ids the creations before it returned.
    fn transact(
        &self,
        queries: Vec<Pending<'_>>,
        expected: i64,
        now: &OxigraphStore,
    ) -> Result<i64> {
        let bump = neo4rs::query(&cypher(Q_BUMP)).param("expected", expected);
        let (built, mut to_send) = tokio::sync::mpsc::channel::<Result<Outgoing>>(2);
        let (ids_sent, ids_received) = std::sync::mpsc::channel::<HashMap<String, i64>>();
        let outcome = std::thread::scope(|scope| {
            scope.spawn(move || build(queries, now, &built, &ids_received));
            // The version first: it locks the catalog node, so concurrent
            // writers queue behind each other and a stale one learns it
            // before writing.
            let outcome = self.block(async {
                let mut txn = self.graph.start_txn().await?;
                let version = match rows_of(&mut txn, bump).await {
                    Ok(rows) => rows.last().and_then(|r| r.get::<i64>("version").ok()),
                    Err(e) => {
                        let _ = txn.rollback().await;
                        return Err(e);
                    }
                };
                let Some(version) = version else {
                    let _ = txn.rollback().await;
                    return Ok(Ok(None));
                };
                let mut ids: HashMap<String, i64> = HashMap::new();
                while let Some(q) = to_send.recv().await {
                    let sent = match q {
                        Ok(q) => send(&mut txn, q, &mut ids, &ids_sent).await,
                        Err(e) => Ok(Err(e)),
                    };
                    match sent {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            let _ = txn.rollback().await;
                            return Ok(Err(e));
                        }
                        Err(e) => {
                            let _ = txn.rollback().await;
                            return Err(e);
                        }
                    }
                }
                let t = std::time::Instant::now();
                txn.commit().await?;
                tracing::debug!("bolt: committed in {:?}", t.elapsed());
                Ok(Ok(Some(version)))
            });
            // Ended early: the builder's next send fails and it stops.
            drop(to_send);
            outcome
        });
        match outcome.map_err(|e| bolt_err(&self.server, e))?? {
            Some(v) => Ok(v),
            None => Err(Error::Conflict(
                "another replica changed the catalog at the same time; nothing was written, try again"
                    .into(),
            )),
        }
    }
}

/// A query of a write, or a batch of subjects made into one only when it
/// is sent (its parameters are most of a large write's memory).
enum Pending<'a> {
    /// Handed to the transaction as it is.
    Send(Outgoing),
    Subjects(Vec<SubjectWrite<'a>>),
}

/// What the builder hands the transaction.
enum Outgoing {
    Run(Query),
    /// Creates this many resources and returns their node ids.
    Create(Query, usize),
    /// Created resources another label was then set on: on ArcadeDB that
    /// re-creates the node, so the id its creation returned is gone.
    Forget(Vec<String>),
    /// A batch, and the rows and objects it must reach.
    Checked(Query, usize, usize),
    /// The ids created so far are wanted for the next batch.
    Ids,
}

/// The builder's side: every query in order, a batch built only when the
/// channel has room; before the first batch, the ids created before it.
fn build(
    queries: Vec<Pending<'_>>,
    now: &OxigraphStore,
    built: &tokio::sync::mpsc::Sender<Result<Outgoing>>,
    ids_received: &std::sync::mpsc::Receiver<HashMap<String, i64>>,
) {
    let mut ids: Option<HashMap<String, i64>> = None;
    for q in queries {
        let out = match q {
            Pending::Send(out) => Ok(out),
            Pending::Subjects(subjects) => {
                let ids = match &mut ids {
                    Some(ids) => ids,
                    None => {
                        // A closed channel: the transaction ended early.
                        if built.blocking_send(Ok(Outgoing::Ids)).is_err() {
                            return;
                        }
                        let Ok(received) = ids_received.recv() else {
                            return;
                        };
                        ids.insert(received)
                    }
                };
                subjects_query(&subjects, ids, now)
            }
        };
        let failed = out.is_err();
        if built.blocking_send(out).is_err() || failed {
            return;
        }
    }
}

/// One batch as its query: the parts `create_statements.cypher` names.
fn subjects_query(
    subjects: &[SubjectWrite<'_>],
    ids: &HashMap<String, i64>,
    now: &OxigraphStore,
) -> Result<Outgoing> {
    let batch = subject_rows(subjects, ids, |s| literals_of(now, s))?;
    let mut text = cypher(Q_CREATE);
    if !batch.known.is_empty() {
        text.push('\n');
        text.push_str(&cypher(Q_KNOWN_OBJECTS));
    }
    text.push('\n');
    text.push_str(&cypher(if batch.by_id {
        Q_SUBJECTS_BY_ID
    } else {
        Q_SUBJECTS
    }));
    for (key, rel) in &batch.lists {
        let clause = if *rel == OTHER_PREDICATE {
            Q_CREATE_STATEMENT.to_string()
        } else {
            with_identifier(Q_CREATE_LINK, "__TYPE__", rel)
        };
        text.push('\n');
        text.push_str(&with_identifier(&clause, "__KEY__", key));
    }
    text.push('\n');
    text.push_str(&cypher(Q_CHECKED));
    let (rows, objects) = (batch.rows.len(), batch.objects.len() + batch.known.len());
    let q = neo4rs::query(&text)
        .param("objects", batch.objects)
        .param("known", batch.known)
        .param("rows", batch.rows);
    Ok(Outgoing::Checked(q, rows, objects))
}

/// Every row of a query in the transaction.
async fn rows_of(txn: &mut neo4rs::Txn, q: Query) -> neo4rs::Result<Vec<neo4rs::Row>> {
    let mut stream = txn.execute(q).await?;
    let mut rows = Vec::new();
    while let Some(row) = stream.next(txn.handle()).await? {
        rows.push(row);
    }
    Ok(rows)
}

/// Sends one query of a write: `Ok(Err(_))` when what came back is not
/// what was sent (the write must fail), `Err` when the server refused it.
async fn send(
    txn: &mut neo4rs::Txn,
    q: Outgoing,
    ids: &mut HashMap<String, i64>,
    ids_sent: &std::sync::mpsc::Sender<HashMap<String, i64>>,
) -> neo4rs::Result<Result<()>> {
    let short = |what: &str, want: usize, got: usize| {
        Err(Error::store_msg(format!(
            "the graph server reached {got} of a batch's {want} {what}; nothing was written"
        )))
    };
    match q {
        Outgoing::Run(q) => txn.run(q).await.map(Ok),
        Outgoing::Create(q, n) => {
            let rows = rows_of(txn, q).await?;
            let before = ids.len();
            for row in &rows {
                if let (Ok(iri), Ok(id)) = (row.get::<String>("iri"), row.get::<i64>("id")) {
                    ids.insert(iri, id);
                }
            }
            Ok(match ids.len() - before {
                got if got == n => Ok(()),
                got => short("new resources", n, got),
            })
        }
        Outgoing::Checked(q, want_rows, want_objects) => {
            let rows = rows_of(txn, q).await?;
            let count = |c: &str| {
                rows.first()
                    .and_then(|r| r.get::<i64>(c).ok())
                    .map_or(0, |n| n as usize)
            };
            Ok(match (count("rows"), count("objects")) {
                (r, _) if r != want_rows => short("subjects", want_rows, r),
                (_, o) if o != want_objects => short("objects", want_objects, o),
                _ => Ok(()),
            })
        }
        Outgoing::Forget(iris) => {
            for iri in &iris {
                ids.remove(iri);
            }
            Ok(Ok(()))
        }
        Outgoing::Ids => {
            // The builder waits for them; gone, it has stopped.
            let _ = ids_sent.send(std::mem::take(ids));
            Ok(Ok(()))
        }
    }
}

/// The batches of a difference, each one's subjects all created by this
/// write (named by id) or none.
fn subject_queries<'a>(
    removed: &'a [Statement],
    added: &'a [Statement],
    created: &HashSet<&str>,
) -> Vec<Pending<'a>> {
    let mut queries = Vec::new();
    for batch in subject_batches(removed, added, BATCH) {
        let (new, old): (Vec<_>, Vec<_>) = batch.into_iter().partition(|w| created.contains(w.s));
        queries.extend(
            [new, old]
                .into_iter()
                .filter(|b| !b.is_empty())
                .map(Pending::Subjects),
        );
    }
    queries
}

/// The statements held as a subject's properties in the mirror, every
/// graph.
fn literals_of(now: &OxigraphStore, subject: &str) -> Result<Vec<Statement>> {
    now.quads_about(&parse_node(subject)?)?
        .iter()
        .filter(|q| held_as_property(q))
        .map(encode_unkeyed)
        .collect()
}

/// Whether `subject` still has type `class` in the mirror as the write
/// leaves it (any graph).
fn still_typed(now: &OxigraphStore, subject: &str, class: &str) -> Result<bool> {
    Ok(now.quads_about(&parse_node(subject)?)?.iter().any(|q| {
        q.predicate.as_str() == crate::vocab::RDF_TYPE
            && matches!(&q.object, Term::NamedNode(c) if c.as_str() == class)
    }))
}

/// The subjects of type statements by (class, gained): `true` for those
/// `added` gives, `false` for those `removed` took.
fn typed_by_class<'a>(
    added: &'a [Statement],
    removed: &'a [Statement],
) -> BTreeMap<(&'a str, bool), BTreeSet<&'a str>> {
    let mut typed: BTreeMap<(&str, bool), BTreeSet<&str>> = BTreeMap::new();
    for (statements, gained) in [(added, true), (removed, false)] {
        for st in statements
            .iter()
            .filter(|st| st.p == crate::vocab::RDF_TYPE)
        {
            if let Object::Resource(class) | Object::Class(class) = &st.object {
                typed
                    .entry((class.as_str(), gained))
                    .or_default()
                    .insert(st.s.as_str());
            }
        }
    }
    typed
}

/// The statements of a difference as queries: deletes, the labels of the
/// resources that gained a type, creates by relationship type, the labels
/// of those that lost one, orphans among the ends of removed statements.
fn difference_queries<'a>(
    removed: &'a [Statement],
    added: &'a [Statement],
    new_typed: &HashSet<String>,
    now: &OxigraphStore,
) -> Result<Vec<Pending<'a>>> {
    let mut queries: Vec<Pending<'a>> = Vec::new();
    // Statements held as properties are written again with their subject.
    let removed_keys: Vec<String> = removed
        .iter()
        .filter(|st| matches!(st.object, Object::Resource(_)))
        .map(|st| st.k.clone())
        .collect();
    for chunk in removed_keys.chunks(BATCH) {
        queries.push(Pending::Send(Outgoing::Run(
            neo4rs::query(&cypher(Q_DELETE)).param("keys", chunk.to_vec()),
        )));
    }
    // Labels change only on resources that gained or lost a type, and
    // only that type's label; a gained one is set before the write's
    // relationships exist (`label.cypher` says why), a lost one after.
    let typed = typed_by_class(added, removed);
    let label_query = |text: &str, label: &str, iris: Vec<&str>| {
        let iris: Vec<String> = iris.into_iter().map(str::to_string).collect();
        iris.chunks(BATCH)
            .map(|chunk| {
                let q = neo4rs::query(&with_identifier(text, "__LABEL__", label));
                (q.param("iris", chunk.to_vec()), chunk.len())
            })
            .collect::<Vec<_>>()
    };
    let ready =
        |qs: Vec<(Query, usize)>| qs.into_iter().map(|(q, _)| Pending::Send(Outgoing::Run(q)));
    // A resource new to the catalog is created with its first label (no
    // lookup); one with a second type gets that label as any other.
    let mut uncreated: HashSet<&str> = new_typed.iter().map(String::as_str).collect();
    let (mut created, mut stale): (HashSet<&str>, Vec<&str>) = Default::default();
    for (class, label) in LABELS {
        if let Some(iris) = typed.get(&(*class, true)) {
            let (new, known): (Vec<&str>, Vec<&str>) =
                iris.iter().partition(|iri| uncreated.remove(**iri));
            created.extend(new.iter().copied());
            stale.extend(known.iter().filter(|iri| created.remove(**iri)));
            // Created, their node ids returned for the batches.
            queries.extend(
                label_query(Q_LABEL_NEW, label, new)
                    .into_iter()
                    .map(|(q, n)| Pending::Send(Outgoing::Create(q, n))),
            );
            queries.extend(ready(label_query(Q_LABEL, label, known)));
        }
    }
    if !stale.is_empty() {
        queries.push(Pending::Send(Outgoing::Forget(
            stale.into_iter().map(str::to_string).collect(),
        )));
    }
    queries.extend(subject_queries(removed, added, &created));
    for (class, label) in LABELS {
        if let Some(iris) = typed.get(&(*class, false)) {
            let mut lost = Vec::new();
            for iri in iris {
                if !still_typed(now, iri, class)? {
                    lost.push(*iri);
                }
            }
            queries.extend(ready(label_query(Q_UNLABEL, label, lost)));
        }
    }
    // Orphans can only be among the ends of removed statements.
    let ends: Vec<String> = removed
        .iter()
        .flat_map(|st| {
            let object = match &st.object {
                Object::Resource(o) => Some(o.clone()),
                Object::Class(_) | Object::Literal { .. } => None,
            };
            std::iter::once(st.s.clone()).chain(object)
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for chunk in ends.chunks(BATCH) {
        queries.push(Pending::Send(Outgoing::Run(
            neo4rs::query(&cypher(Q_ORPHANS)).param("iris", chunk.to_vec()),
        )));
    }
    Ok(queries)
}
