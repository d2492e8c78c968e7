// Stored tool vectors for the wanted (iri, hash) pairs: only those embedded
// by model $model from the same text (hash) come back.
UNWIND $rows AS row
MATCH (t:Resource {iri: row.iri})
WHERE t.embedding_model = $model AND t.embedding_hash = row.hash
RETURN t.iri AS iri, t.embedding AS embedding
