// Statements whose object is a resource, from the row's list __KEY__.
// __TYPE__ is one of the relationship types of `graph/neo4j.rs` (a closed
// list, never data); values are bound.
FOREACH (it IN coalesce(row.__KEY__, []) |
  MERGE (o:Resource {iri: it.o})
  CREATE (s)-[:__TYPE__ {k: it.k, p: it.p, g: it.g}]->(o))
