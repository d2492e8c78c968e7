// One batch of a write, grouped by subject, in parts (`graph/neo4j/write.rs`
// puts them together). First the batch's distinct link objects ($objects),
// each looked up (or created) once however many links reach it; then, when
// the batch has some, `create_known_objects.cypher` (objects this write
// created, by node id); then one row per subject ($rows:
// `create_subjects.cypher` by IRI, or `create_subjects_by_id.cypher`), so
// the subject too is looked up once for all its statements (on ArcadeDB
// MERGE's index lookups were most of the server's time); the clauses of
// `create_link_clause.cypher`, one per list the batch has; and
// `create_checked.cypher`, what the client checks.
UNWIND $objects AS iri
MERGE (o:Resource {iri: iri})
WITH collect(o) AS objs
