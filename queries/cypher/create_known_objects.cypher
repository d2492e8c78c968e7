// The batch's link objects this write created ($known: the node ids their
// creation returned, `create_labelled.cypher`), after those by IRI: a
// lookup by id, not by the IRI index (inside a registration's transaction
// on ArcadeDB, 2.5 against 12.5 us). `create_checked.cypher` returns how
// many objects there are, so a missing one fails the write.
UNWIND $known AS id
MATCH (k) WHERE id(k) = id
WITH objs, collect(k) AS found
WITH objs + found AS objs
