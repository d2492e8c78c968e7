// Statements whose object is a literal: one Literal node per statement.
UNWIND $rows AS row
MERGE (s:Resource {iri: row.s})
CREATE (s)-[:__TYPE__ {k: row.k, p: row.p, g: row.g}]->(:Literal {k: row.k, value: row.v, dt: row.dt, lang: row.lang})
