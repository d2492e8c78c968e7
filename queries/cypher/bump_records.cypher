// Counts a records write (run first in its transaction, so that records
// writers queue on one node); the catalog's version is not touched.
MERGE (v:Records {id: 'records'})
  ON CREATE SET v.version = 0
SET v.version = v.version + 1
RETURN v.version AS version
