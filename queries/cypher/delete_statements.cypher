// Relationships by statement key (literal statements are properties,
// written again with their subject).
MATCH (s:Resource)-[r]->(o)
WHERE r.k IN $keys
DELETE r
