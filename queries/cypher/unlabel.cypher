// A label whose type statement is gone, on the resources a write took a
// type from ($iris).
UNWIND $iris AS iri
MATCH (n:__LABEL__ {iri: iri})
WHERE NOT (n)-[:TYPE]->(:Resource {iri: $class})
REMOVE n:__LABEL__
