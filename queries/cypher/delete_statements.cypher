// Statements by key; a literal object goes with its statement.
MATCH (s:Resource)-[r]->(o)
WHERE r.k IN $keys
DELETE r
WITH o
WHERE o:Literal
DELETE o
