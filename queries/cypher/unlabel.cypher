MATCH (n:__LABEL__)
WHERE NOT (n)-[:TYPE]->(:Resource {iri: $class})
REMOVE n:__LABEL__
