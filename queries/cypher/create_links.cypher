// Statements whose object is a resource. __TYPE__ is one of the relationship
// types of `graph/neo4j.rs` (a closed list, never data); values are bound.
UNWIND $rows AS row
MERGE (s:Resource {iri: row.s})
MERGE (o:Resource {iri: row.o})
CREATE (s)-[:__TYPE__ {k: row.k, p: row.p, g: row.g}]->(o)
