// Tool vectors as properties of the tool node, with the model and the hash
// of the text they embed (a replica reuses them only when both match).
UNWIND $rows AS row
MATCH (t:Resource {iri: row.iri})
SET t.embedding = row.v, t.embedding_model = $model, t.embedding_hash = row.hash
