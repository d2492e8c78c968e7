// Resources no statement mentions any more.
MATCH (n:Resource)
WHERE NOT (n)--()
DELETE n
