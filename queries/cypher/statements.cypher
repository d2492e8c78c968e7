// Every relationship statement: subject, predicate IRI, graph (the source),
// and the object, a resource (o), or a literal node an earlier toolgraph
// wrote (v, dt, lang; moved into properties at connect). Literal statements
// held as properties are read by `literals.cypher`.
MATCH (s:Resource)-[r]->(o)
WHERE r.k IS NOT NULL
RETURN s.iri AS s, r.p AS p, r.g AS g, o.iri AS o, o.value AS v, o.dt AS dt, o.lang AS lang
