// Every subject's literal statements, held as its properties: parallel
// lists of predicate, graph, value, datatype and language.
MATCH (s:Resource)
WHERE s.lit_p IS NOT NULL
RETURN s.iri AS s, s.lit_p AS p, s.lit_g AS g, s.lit_v AS v, s.lit_dt AS dt, s.lit_lang AS lang
