// Statements whose predicate is outside the closed list of relationship
// types (`graph/neo4j/codec.rs`): a STATEMENT with the predicate's IRI in
// `p`; otherwise as `create_link_clause.cypher`.
FOREACH (it IN coalesce(row.__KEY__, []) |
  FOREACH (o IN [objs[it.o]] |
    CREATE (s)-[:STATEMENT {k: it.k, p: it.p, g: it.g}]->(o)))
