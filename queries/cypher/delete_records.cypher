// Deletes the records of one kind whose ids are in $ids.
UNWIND $ids AS id
MATCH (r:Record {kind: $kind, id: id})
DETACH DELETE r
