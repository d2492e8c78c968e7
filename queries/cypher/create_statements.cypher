// One batch of a write, grouped by subject. First the batch's distinct link
// objects ($objects), each looked up (or created) once however many links
// reach it; then one row per subject ($rows: {s, props, and a list per
// relationship type}), so the subject too is looked up once for all its
// statements (on ArcadeDB MERGE's index lookups were most of the server's
// time). `props` holds the subject's literal statements when they changed
// (`codec::literal_props`; a null removes a property), else nothing. The
// clauses of `create_link_clause.cypher` follow, one per list the batch has.
UNWIND $objects AS iri
MERGE (o:Resource {iri: iri})
WITH collect(o) AS objs
UNWIND $rows AS row
MERGE (s:Resource {iri: row.s})
SET s += row.props
