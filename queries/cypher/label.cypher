// Labels mirror rdf:type: __LABEL__ is one of the labels of `graph/neo4j.rs`.
// Only the resources a write gave or took a type ($iris).
UNWIND $iris AS iri
MATCH (n:Resource {iri: iri})-[:TYPE]->(c:Resource {iri: $class})
SET n:__LABEL__
