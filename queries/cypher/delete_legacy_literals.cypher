// Literal nodes an earlier toolgraph wrote, with their relationships: run
// in the write that sets the same statements as their subjects' properties.
MATCH (l:Literal)
DETACH DELETE l
