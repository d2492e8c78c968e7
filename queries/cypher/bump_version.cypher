// Optimistic concurrency, run first in every write transaction: writing a
// property locks the catalog node (Neo4j; ArcadeDB refuses the second of two
// concurrent commits), then the version is checked and incremented. No row
// back: another replica wrote since this one read version $expected.
MERGE (c:Catalog {id: 'catalog'})
  ON CREATE SET c.version = 0
SET c.writer_read = $expected
WITH c
WHERE c.version = $expected
SET c.version = c.version + 1
RETURN c.version AS version
