// Statements whose object is a resource, from the row's list __KEY__; an
// item's `o` is its object's place in the batch's objects. __TYPE__ is one
// of the relationship types of `graph/neo4j/codec.rs` (a closed list, never
// data) and names the predicate, so no `p` is kept (a STATEMENT keeps it:
// `create_statement_clause.cypher`); values are bound.
FOREACH (it IN coalesce(row.__KEY__, []) |
  FOREACH (o IN [objs[it.o]] |
    CREATE (s)-[:__TYPE__ {k: it.k, g: it.g}]->(o)))
