// TYPE relationships an earlier toolgraph wrote to a class that has a node
// label ($classes): run in the write that sets the same statements as
// their subjects' properties (the label already says the type).
MATCH (s:Resource)-[r:TYPE]->(c:Resource)
WHERE c.iri IN $classes
DELETE r
