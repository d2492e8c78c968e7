// The catalog version: every write through any replica increments it.
MATCH (c:Catalog {id: 'catalog'})
RETURN c.version AS version
