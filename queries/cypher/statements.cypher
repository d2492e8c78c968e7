// Every statement: subject, predicate IRI, graph (the source), and the
// object, a resource (o) or a literal (v, dt, lang).
MATCH (s:Resource)-[r]->(o)
WHERE r.k IS NOT NULL
RETURN s.iri AS s, r.p AS p, r.g AS g, o.iri AS o, o.value AS v, o.dt AS dt, o.lang AS lang
