// A label whose type statement is gone, on the resources a write took the
// type from and whose statements (in the mirror as the write leaves them)
// give it no more ($iris, chosen by the client: a type of a labelled class
// is the label and a property entry, not a relationship to look for).
UNWIND $iris AS iri
MATCH (n:__LABEL__ {iri: iri})
REMOVE n:__LABEL__
