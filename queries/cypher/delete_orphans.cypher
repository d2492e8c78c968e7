// Of the resources a write removed statements of or to ($iris), those no
// statement mentions any more: no relationship and no literal property.
UNWIND $iris AS iri
MATCH (n:Resource {iri: iri})
WHERE NOT (n)--() AND n.lit_p IS NULL
DELETE n
