// The records of one kind (airlock sources and items, usage counters,
// policies, gaps): id and JSON text, by id. Records live beside the
// catalog, never in its statements.
MATCH (r:Record {kind: $kind})
RETURN r.id AS id, r.json AS json
ORDER BY id
