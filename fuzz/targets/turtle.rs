//! Any text loaded as Turtle into a store: a parse error naming a place, a
//! constraint violation, or a load; never a panic, and a refused load
//! writes nothing (the store is as it was).

use toolgraph::graph::{GraphStore, OxigraphStore, Source, SourceData};

/// A base every input is loaded on top of: one valid tool.
const BASE: &str = r#"
@prefix tg: <https://toolgraph.dev/ns#> .
@prefix tool: <https://toolgraph.dev/tool/> .
tool:base a tg:Tool ; tg:name "base" ; tg:description "A tool that is there before." .
"#;

pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(store) = OxigraphStore::memory() else {
        return;
    };
    let source = |name: &str, t: &str| Source {
        name: name.into(),
        data: SourceData::Turtle(t.into()),
    };
    store
        .load_unchecked(&[source("base.ttl", BASE)])
        .expect("the base loads");
    let before = store.len().expect("len");
    match store.load(&[source("fuzz.ttl", text)]) {
        Ok(_) => {}
        Err(e) => {
            let message = e.to_string();
            assert!(!message.is_empty());
            assert_eq!(
                store.len().expect("len"),
                before,
                "a refused load wrote: {message}"
            );
        }
    }
}
