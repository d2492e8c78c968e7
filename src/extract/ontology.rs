//! Build lexicon entries from an ontology loaded in an oxigraph store
//! (`queries/lexicon.rq`, over the union of all graphs).

use oxigraph::model::Term;
use oxigraph::sparql::{QueryResults, SparqlEvaluator};
use oxigraph::store::Store;

use super::{LexEntry, TermKind};
use crate::{Error, Result};

const LEXICON_RQ: &str = include_str!("../../queries/lexicon.rq");

fn text(t: Option<&Term>) -> Option<String> {
    match t? {
        Term::NamedNode(n) => Some(n.as_str().to_string()),
        Term::Literal(l) => Some(l.value().to_string()),
        _ => None,
    }
}

/// Every verb, entity and instance label in `store`, as lexicon entries.
#[allow(dead_code)] // used by the catalog and the integration tests
#[allow(clippy::result_large_err)] // the crate-wide error type
pub(crate) fn lexicon_entries(store: &Store) -> Result<Vec<LexEntry>> {
    let mut q = SparqlEvaluator::new()
        .parse_query(LEXICON_RQ)
        .map_err(|e| Error::Sparql(format!("queries/lexicon.rq: {e}")))?;
    q.dataset_mut().set_default_graph_as_union();
    let results = q
        .on_store(store)
        .execute()
        .map_err(|e| Error::Sparql(format!("queries/lexicon.rq: {e}")))?;
    let QueryResults::Solutions(rows) = results else {
        return Err(Error::Sparql("queries/lexicon.rq: not a SELECT".into()));
    };
    let mut out = Vec::new();
    for row in rows {
        let row = row.map_err(|e| Error::Sparql(format!("queries/lexicon.rq: {e}")))?;
        let (Some(iri), Some(label), Some(kind)) = (
            text(row.get("node")),
            text(row.get("label")),
            text(row.get("kind")),
        ) else {
            continue;
        };
        let kind = match kind.as_str() {
            "verb" => TermKind::Verb,
            "entity" => TermKind::Entity,
            "instance" => match text(row.get("class")) {
                Some(class) => TermKind::Instance { class },
                None => continue,
            },
            _ => continue,
        };
        out.push(LexEntry { label, iri, kind });
    }
    // Deterministic order whatever the store's iteration order.
    out.sort_by(|a, b| (&a.iri, &a.label).cmp(&(&b.iri, &b.label)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxigraph::io::RdfFormat;

    #[test]
    fn reads_verbs_entities_and_instances() {
        let ttl = r#"
            @prefix tg: <https://toolgraph.dev/ns#> .
            @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
            <https://toolgraph.dev/verb/book> a tg:Verb ; skos:prefLabel "book"@en ; skos:altLabel "reserve" .
            <https://toolgraph.dev/entity/Airline> a tg:Entity ; skos:prefLabel "airline" .
            <https://toolgraph.dev/brand/southwest> a tg:Instance ; tg:instanceOf <https://toolgraph.dev/entity/Airline> ;
                skos:prefLabel "Southwest" .
        "#;
        let store = Store::new().unwrap();
        store.load_from_slice(RdfFormat::Turtle, ttl).unwrap();
        let es = lexicon_entries(&store).unwrap();
        let got: Vec<_> = es.iter().map(|e| (e.label.as_str(), &e.kind)).collect();
        assert_eq!(
            got,
            [
                (
                    "Southwest",
                    &TermKind::Instance {
                        class: crate::vocab::ENT.to_string() + "Airline"
                    }
                ),
                ("airline", &TermKind::Entity),
                ("book", &TermKind::Verb),
                ("reserve", &TermKind::Verb),
            ]
        );
    }
}
