// The batch's subjects when this write created every one of them
// (`create_labelled.cypher` returned their node ids): a lookup by id each;
// otherwise as `create_subjects.cypher`.
UNWIND $rows AS row
MATCH (s) WHERE id(s) = row.sid
SET s += row.props
