// Replaces the records of one kind in $rows ({id, json}).
UNWIND $rows AS row
MERGE (r:Record {kind: $kind, id: row.id})
SET r.json = row.json
