// Statements grouped by subject: one row per subject ($rows: {s, and a list
// per relationship type and object kind}), so the subject is looked up once
// for all its statements, not once per statement (on ArcadeDB the index
// lookups of MERGE were 64 % of the server's time for 10k new tools). The
// clauses of `create_link_clause.cypher` and `create_literal_clause.cypher`
// follow, one per list the batch has.
UNWIND $rows AS row
MERGE (s:Resource {iri: row.s})
