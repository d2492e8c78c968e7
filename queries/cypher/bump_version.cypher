// Optimistic concurrency: the write commits only when nobody wrote since
// this replica read version $expected (no row back: somebody did).
MERGE (c:Catalog {id: 'catalog'})
  ON CREATE SET c.version = 0
WITH c
WHERE c.version = $expected
SET c.version = c.version + 1
RETURN c.version AS version
