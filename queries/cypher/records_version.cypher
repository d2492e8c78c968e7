// How many records writes the server has seen (0 before the first).
MATCH (v:Records {id: 'records'})
RETURN v.version AS version
