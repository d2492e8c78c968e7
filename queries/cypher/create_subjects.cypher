// The batch's subjects by IRI, each looked up (or created) once: `props`
// holds the subject's literal statements when they changed
// (`codec::literal_props`; a null removes a property), else nothing.
UNWIND $rows AS row
MERGE (s:Resource {iri: row.s})
SET s += row.props
