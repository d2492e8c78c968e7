// Labels mirror rdf:type: __LABEL__ is one of the labels of `graph/neo4j.rs`.
MATCH (n:Resource)-[:TYPE]->(c:Resource {iri: $class})
SET n:__LABEL__
