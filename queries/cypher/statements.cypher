// Every relationship statement: subject, predicate (`p` on a STATEMENT and
// on what toolgraph wrote before 2026-12; else the relationship's type
// names it: `graph/neo4j/codec.rs`), graph (the source), and the object, a
// resource (o), or a literal node an earlier toolgraph wrote (v, dt, lang;
// moved into properties at connect). Literal statements held as
// properties are read by `literals.cypher`.
MATCH (s:Resource)-[r]->(o)
WHERE r.k IS NOT NULL
RETURN s.iri AS s, r.p AS p, type(r) AS t, r.g AS g, o.iri AS o, o.value AS v, o.dt AS dt, o.lang AS lang
