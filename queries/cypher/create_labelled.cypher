// Resources new to the catalog (no statement named them before this write:
// `graph/neo4j/diff.rs`), created with the label of a type they gain without
// a lookup each (`label.cypher` looked up every one: a tenth of the server's
// time registering 100k tools). __LABEL__ is one of the labels of
// `graph/neo4j/codec.rs`. Their node ids come back: the write's batches
// name them by id (`create_subjects_by_id.cypher`).
UNWIND $iris AS iri
CREATE (n:Resource:__LABEL__ {iri: iri})
RETURN iri, id(n) AS id
