// Statements whose object is a resource, from the row's list __KEY__; an
// item's `o` is its object's place in the batch's objects. __TYPE__ is one
// of the relationship types of `graph/neo4j/codec.rs` (a closed list, never
// data); values are bound.
FOREACH (it IN coalesce(row.__KEY__, []) |
  FOREACH (o IN [objs[it.o]] |
    CREATE (s)-[:__TYPE__ {k: it.k, p: it.p, g: it.g}]->(o)))
