// Statements whose object is a literal, from the row's list __KEY__: one
// Literal node per statement.
FOREACH (it IN coalesce(row.__KEY__, []) |
  CREATE (s)-[:__TYPE__ {k: it.k, p: it.p, g: it.g}]->(:Literal {k: it.k, value: it.v, dt: it.dt, lang: it.lang}))
