// Run once at start-up, one statement per `;`. Neo4j 5 syntax; a server
// that does not support a statement logs a warning and goes on.
// Resource.iri gets an index, not a uniqueness constraint: ArcadeDB re-checks
// a unique index when a label is added to a node and refuses the node's own
// value. Uniqueness holds anyway: every write locks the catalog node first,
// so writers never MERGE the same resource at the same time.
CREATE INDEX toolgraph_resource_iri IF NOT EXISTS FOR (n:Resource) ON (n.iri);
CREATE CONSTRAINT toolgraph_catalog_id IF NOT EXISTS FOR (n:Catalog) REQUIRE n.id IS UNIQUE;
CREATE INDEX toolgraph_tool_iri IF NOT EXISTS FOR (n:Tool) ON (n.iri);
CREATE INDEX toolgraph_record_kind_id IF NOT EXISTS FOR (n:Record) ON (n.kind, n.id);
CREATE CONSTRAINT toolgraph_records_id IF NOT EXISTS FOR (n:Records) REQUIRE n.id IS UNIQUE
