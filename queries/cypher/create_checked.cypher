// What a batch reached: its rows and its objects, checked by the client
// against what it sent (a subject or object not found by id would
// otherwise leave its statements out silently; the write then fails and
// the transaction rolls back).
RETURN size(objs) AS objects, count(*) AS rows
