// Of the resources a write removed statements of or to ($iris), those no
// statement mentions any more.
UNWIND $iris AS iri
MATCH (n:Resource {iri: iri})
WHERE NOT (n)--()
DELETE n
