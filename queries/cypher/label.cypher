// Labels mirror rdf:type: __LABEL__ is one of the labels of `graph/neo4j.rs`.
// Only the resources a write gives that type ($iris), and before any of the
// write's relationships: on ArcadeDB a label is the node's type, and changing
// it re-creates the node and moves every relationship it has (labelling 10k
// tools after their relationships took 46 % of the server's time). A new
// resource is created with its label; an existing one gets it.
UNWIND $iris AS iri
OPTIONAL MATCH (e:Resource {iri: iri})
FOREACH (_ IN CASE WHEN e IS NULL THEN [1] ELSE [] END |
  CREATE (:Resource:__LABEL__ {iri: iri}))
FOREACH (_ IN CASE WHEN e IS NULL THEN [] ELSE [1] END |
  SET e:__LABEL__)
