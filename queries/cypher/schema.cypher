// Run once at start-up, one statement per `;`. Neo4j 5 syntax; a server
// that does not support a statement logs a warning and goes on.
CREATE CONSTRAINT toolgraph_resource_iri IF NOT EXISTS FOR (n:Resource) REQUIRE n.iri IS UNIQUE;
CREATE CONSTRAINT toolgraph_catalog_id IF NOT EXISTS FOR (n:Catalog) REQUIRE n.id IS UNIQUE;
CREATE INDEX toolgraph_literal_key IF NOT EXISTS FOR (n:Literal) ON (n.k);
CREATE INDEX toolgraph_tool_iri IF NOT EXISTS FOR (n:Tool) ON (n.iri)
