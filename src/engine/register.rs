//! Registration: parse, build constellations, write one transaction,
//! refresh the snapshot (only changed tools are re-embedded); removal,
//! reload from disk, and read-only SPARQL.

use super::{Engine, LoadOutcome, Registration, ReloadReport, StoreRead};
use crate::constellation;
use crate::embed::{Ahead, SyncReport, descriptor_text, embed_ahead};
use crate::error::{Error, Result};
use crate::extract::{Extractor, Lexicon};
use crate::graph::{GraphStore, LoadReport, Source, SourceData};
use crate::import::{self, Format, Input};
use crate::model::Constellation;
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::time::Duration;

impl Engine {
    /// Reads and parses files into store sources (nothing is written).
    pub fn prepare(&self, files: &[PathBuf], format: Option<Format>) -> Result<Vec<Source>> {
        self.sources(import::read_files(files, format)?)
    }

    /// Turns parsed inputs into store sources: Turtle as it is, manifests as
    /// constellations built with the snapshot's lexicon plus the lexicon of
    /// any Turtle in the same batch.
    pub fn sources(&self, inputs: Vec<Input>) -> Result<Vec<Source>> {
        let mut sources = Vec::with_capacity(inputs.len());
        let mut manifests = Vec::new();
        for input in inputs {
            match input {
                Input::Turtle { name, text } => sources.push(Source {
                    name,
                    data: SourceData::Turtle(text),
                }),
                Input::Manifest { name, tools } => manifests.push((name, tools)),
            }
        }
        if manifests.is_empty() {
            return Ok(sources);
        }
        let snapshot = self.snapshot();
        // A source registered again is built as on its first load: without
        // the verbs and terms only its previous version declared.
        let names: Vec<String> = manifests.iter().map(|(n, _)| n.clone()).collect();
        let dropped = self.store.declared_only_by(&names)?;
        let mut lexicon: Vec<_> = snapshot
            .catalog
            .lexicon_entries()
            .iter()
            .filter(|e| !dropped.contains(&e.iri))
            .cloned()
            .collect();
        if !sources.is_empty() {
            let scratch = crate::graph::OxigraphStore::memory()?;
            scratch.load_unchecked(&sources)?;
            lexicon.extend(scratch.lexicon()?);
        }
        let extractor = Extractor::new(Lexicon::new(lexicon));
        for (name, descriptors) in manifests {
            let items: Vec<Constellation> = descriptors
                .par_iter()
                .map(|d| constellation::build(d, &extractor))
                .collect();
            sources.push(Source {
                name,
                data: SourceData::Constellations(items),
            });
        }
        Ok(sources)
    }

    /// Loads sources in one transaction (all or nothing), then refreshes
    /// the snapshot (re-embedding only what changed).
    pub fn load(&self, sources: &[Source]) -> Result<(LoadReport, Option<SyncReport>)> {
        self.load_ahead(sources, None)
    }

    /// Loads sources like [`Engine::load`], taking the vectors `ahead`
    /// holds (screening computed them) instead of embedding those texts.
    fn load_ahead(
        &self,
        sources: &[Source],
        ahead: Option<Ahead>,
    ) -> Result<(LoadReport, Option<SyncReport>)> {
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let write = || {
            let t = std::time::Instant::now();
            let report = if self.strict {
                self.store.load(sources)?
            } else {
                self.store.load_unchecked(sources)?
            };
            tracing::debug!(
                "load: {} sources written in {:?}",
                sources.len(),
                t.elapsed()
            );
            let read = if self.wrote(&report) {
                Some(self.read_store()?)
            } else {
                None
            };
            Ok((report, read))
        };
        let publish = |read: Option<StoreRead>, ahead: Option<&Ahead>| match read {
            Some(read) => self.publish(read, ahead),
            None => Ok(self.kept()),
        };
        if let Some(ahead) = ahead {
            let (report, read) = write()?;
            return Ok((report, publish(read, Some(&ahead))?));
        }
        let texts = self.texts_ahead(sources);
        let Some(embedder) = self.embedder.as_deref().filter(|_| !texts.is_empty()) else {
            let (report, read) = write()?;
            return Ok((report, publish(read, None)?));
        };
        // The new tools' texts are known before the store has them: one
        // core embeds them while the other writes and reads back; the sync
        // then takes those vectors and embeds the rest on every core.
        let stop = AtomicBool::new(false);
        let (written, ahead) = std::thread::scope(|s| {
            let worker = s.spawn(|| embed_ahead(embedder, texts, &stop));
            let written: Result<_> = write();
            stop.store(true, AtomicOrdering::Relaxed);
            (written, worker.join().unwrap_or_default())
        });
        let (report, read) = written?;
        Ok((report, publish(read, Some(&ahead))?))
    }

    /// The texts of the tools `sources` describe that are not embedded yet,
    /// when this load can embed them beside the store write: an embedder
    /// with a one-core mode, and a second core.
    fn texts_ahead(&self, sources: &[Source]) -> Vec<String> {
        let Some(embedder) = &self.embedder else {
            return Vec::new();
        };
        if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
            return Vec::new();
        }
        let texts = sources
            .iter()
            .filter_map(|s| match &s.data {
                SourceData::Constellations(items) => Some(items),
                SourceData::Turtle(_) => None,
            })
            .flatten()
            .map(|c| descriptor_text(&c.descriptor));
        let snapshot = self.snapshot();
        Ahead::wanted(texts, snapshot.catalog.vectors(), embedder.model_id())
    }

    /// Loads files (Turtle, MCP, OpenAPI, JSONL) in one transaction.
    pub fn load_paths(&self, paths: &[PathBuf], format: Option<Format>) -> Result<LoadOutcome> {
        self.load_paths_screened(paths, format, None)
    }

    /// Loads files like [`Engine::load_paths`]; with `screening`, their
    /// manifests are screened first (reported in the outcome; with
    /// `Some(true)` a `block` finding refuses the files, nothing written).
    pub fn load_paths_screened(
        &self,
        paths: &[PathBuf],
        format: Option<Format>,
        screening: Option<bool>,
    ) -> Result<LoadOutcome> {
        let _one = self
            .preparing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let files = import::collect_files(paths)?;
        let sources = self.prepare(&files, format)?;
        let (report, ahead) = match screening {
            Some(strict) => {
                let s = self.screen_sources(&sources, strict)?;
                (s.report, s.ahead)
            }
            None => (Vec::new(), None),
        };
        let (store, embeddings) = self.load_ahead(&sources, ahead)?;
        Ok(LoadOutcome {
            store,
            embeddings,
            files: files.iter().map(|f| f.display().to_string()).collect(),
            screening: report,
        })
    }

    /// Registers one manifest or Turtle text as source `source` (default: a
    /// name derived from the content, so the same text twice is one source),
    /// all or nothing; only changed tools are re-embedded.
    pub fn register_text(
        &self,
        source: Option<&str>,
        text: &str,
        format: Option<Format>,
    ) -> Result<Registration> {
        self.register_screened(source, text, format, false)
    }

    /// Registers like [`Engine::register_text`], its manifests screened
    /// first (the report in the answer); with `strict`, a `block` finding
    /// refuses the text and nothing is written.
    pub fn register_screened(
        &self,
        source: Option<&str>,
        text: &str,
        format: Option<Format>,
        strict: bool,
    ) -> Result<Registration> {
        let name = match source {
            Some(s) if s.trim().is_empty() || s.len() > 256 || s.contains(char::is_control) => {
                return Err(Error::invalid_field(
                    crate::error::Field::RegisterSource,
                    "a source name is 1 to 256 printable characters",
                ));
            }
            Some(s) => s.trim().to_string(),
            None => {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(text.as_bytes());
                let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
                let ext = match format {
                    Some(Format::Turtle) => ".ttl",
                    Some(Format::Jsonl) => ".jsonl",
                    _ => "",
                };
                format!("api/{hex}{ext}")
            }
        };
        let input = import::parse_input(&name, text, format)?;
        let _one = self
            .preparing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let sources = self.sources(vec![input])?;
        let warnings: Vec<String> = sources
            .iter()
            .filter_map(|s| match &s.data {
                SourceData::Constellations(items) => Some(items),
                SourceData::Turtle(_) => None,
            })
            .flatten()
            .flat_map(|c| c.warnings.iter().cloned())
            .collect();
        let screened = self.screen_sources(&sources, strict)?;
        let (store, embeddings) = self.load_ahead(&sources, screened.ahead)?;
        let tools = self.snapshot().catalog.of_source(&name).len();
        Ok(Registration {
            source: name,
            tools,
            store,
            embeddings,
            warnings,
            screening: screened.report,
        })
    }

    /// Registers tool descriptors (already parsed, e.g. by the airlock) as
    /// source `source`, replacing what that source held; all or nothing.
    pub fn register_tools(
        &self,
        source: &str,
        tools: Vec<crate::model::ToolDescriptor>,
    ) -> Result<Registration> {
        let _one = self
            .preparing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let sources = self.sources(vec![Input::Manifest {
            name: source.to_string(),
            tools,
        }])?;
        let (store, embeddings) = self.load(&sources)?;
        let tools = self.snapshot().catalog.of_source(source).len();
        Ok(Registration {
            source: source.to_string(),
            tools,
            store,
            embeddings,
            warnings: Vec::new(),
            screening: Vec::new(),
        })
    }

    /// Removes whole sources (their tools leave search) in one transaction.
    pub fn unload_sources(&self, names: &[String]) -> Result<()> {
        let present = self.store.sources()?;
        let names: Vec<String> = names
            .iter()
            .filter(|n| present.contains(n))
            .cloned()
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.store.unload(&names)?;
        self.refresh()?;
        Ok(())
    }

    /// Every registered tool's name with the source that registered it (an
    /// operator's view: screening compares new names with them).
    pub fn registered_names(&self) -> Vec<(String, String)> {
        self.snapshot()
            .catalog
            .tools()
            .iter()
            .map(|t| (t.name.clone(), t.source.to_string()))
            .collect()
    }

    /// Removes a tool (every statement about it). A tool other tools depend
    /// on is refused, naming them.
    pub fn remove_tool(&self, key: &str) -> Result<()> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let idx = c
            .find(key)
            .ok_or_else(|| Error::not_found(crate::error::Kind::Tool, key))?;
        let tool = &c.tools()[idx];
        let dependents: Vec<&str> = c
            .tools()
            .iter()
            .filter(|t| {
                t.depends_on
                    .iter()
                    .any(|d| d.on.eq_ignore_ascii_case(&tool.name))
            })
            .map(|t| t.name.as_str())
            .collect();
        if !dependents.is_empty() {
            return Err(Error::Conflict(format!(
                "`{}` is a prerequisite of {}: remove or change those first",
                tool.name,
                dependents.join(", ")
            )));
        }
        let iri = [tool.iri.clone()];
        let name = tool.name.clone();
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.store
            .apply(&crate::graph::Change {
                remove_tools: &iri,
                check: self.strict,
                ..Default::default()
            })
            .map_err(|e| match e {
                // A profile, goal or policy still names it.
                Error::Violations(v) => Error::Conflict(format!(
                    "`{name}` is still referenced: {}",
                    v.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                other => other,
            })?;
        drop(snap);
        self.refresh()?;
        Ok(())
    }

    /// Reloads files and directories (the ontology and seeds) as one change:
    /// every file replaces its source, and sources that came from these
    /// directories but no longer exist on disk are removed.
    pub fn reload(&self, paths: &[PathBuf]) -> Result<ReloadReport> {
        let _one = self
            .preparing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let files = import::collect_files(paths)?;
        let sources = self.prepare(&files, None)?;
        let present: std::collections::HashSet<String> =
            sources.iter().map(|s| s.name.clone()).collect();
        let roots: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let stale: Vec<String> = self
            .store
            .sources()?
            .into_iter()
            .filter(|s| !present.contains(s))
            .filter(|s| roots.iter().any(|r| s.starts_with(&format!("{r}/"))))
            .collect();
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let store = self.store.apply(&crate::graph::Change {
            load: &sources,
            unload: &stale,
            check: self.strict,
            ..Default::default()
        })?;
        let embeddings = if self.wrote(&store) {
            self.refresh()?
        } else {
            self.kept()
        };
        Ok(ReloadReport {
            files: files.iter().map(|f| f.display().to_string()).collect(),
            removed: stale,
            store,
            embeddings,
        })
    }

    /// Registers an uploaded manifest: its format named (`turtle`, `mcp`,
    /// `openapi`, `jsonl`), else told by its Content-Type, else by its text.
    pub fn register_upload(
        &self,
        source: Option<&str>,
        text: &str,
        format: Option<&str>,
        content_type: &str,
        strict: bool,
    ) -> Result<Registration> {
        let format = match format {
            Some(f) => Some(f.parse::<Format>()?),
            None => Format::of_content_type(content_type),
        };
        self.register_screened(source, text, format, strict)
    }

    /// The caller policy and its context as facts (an operator's view).
    pub fn policy_facts(&self) -> Result<Vec<crate::model::PolicyFact>> {
        self.store.policy()
    }

    /// Writes policy Turtle as source `source`, validated with everything
    /// else, all or nothing.
    pub fn put_policy(&self, source: &str, text: &str) -> Result<Registration> {
        self.register_text(Some(source), text, Some(Format::Turtle))
    }

    /// A read-only SPARQL query over the store, cancelled after `limit`.
    pub fn sparql(&self, query: &str, limit: Duration) -> Result<crate::graph::SparqlOutput> {
        let sparql = self
            .store
            .sparql()
            .ok_or_else(|| Error::unavailable_msg("this store does not answer SPARQL"))?;
        sparql.query_within(query, Some(limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::embedding_text;
    use crate::engine::{Embeddings, EngineOptions};
    use crate::synth::{SynthOptions, from_ontology};
    use std::collections::HashMap;
    use std::sync::Arc;

    /// What a registration embeds ahead is what the sync then needs: a
    /// tool one source describes reads back with the name, texts and
    /// parameters of its descriptor, so both recipes give the same text.
    #[test]
    fn descriptor_texts_are_the_texts_the_store_reads_back() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
        engine.load_paths(&[root.join("ontology")], None).unwrap();
        let synthetic = from_ontology(
            &root.join("ontology"),
            &SynthOptions {
                tools: 300,
                queries: 0,
                seed: 5,
            },
        )
        .unwrap();
        let mut text = synthetic.tools_jsonl();
        // Parameters out of order, a blank description, a model description.
        text.push_str(concat!(
            r#"{"id": "odd_tool", "name": "oddTool_v2", "description": "  Books   a ferry  ","#,
            r#" "meta": {"description_for_model": "Use when the user wants a ferry."},"#,
            r#" "parameters": {"type": "object", "required": ["zeta"], "properties": {"#,
            r#""zeta": {"type": "string", "description": "last"}, "alpha": {"type": "integer"},"#,
            r#" "mid_name": {"type": "string", "description": ""}}}}"#,
            "\n"
        ));
        let input = import::parse_input("synth.jsonl", &text, Some(Format::Jsonl)).unwrap();
        let sources = engine.sources(vec![input]).unwrap();
        engine.load(&sources).unwrap();
        let read: HashMap<String, String> = engine
            .store
            .tools()
            .unwrap()
            .iter()
            .map(|t| (t.iri.clone(), embedding_text(t)))
            .collect();
        let mut compared = 0;
        for source in &sources {
            let SourceData::Constellations(items) = &source.data else {
                continue;
            };
            for c in items {
                assert_eq!(
                    descriptor_text(&c.descriptor),
                    read[&c.iri],
                    "{}",
                    c.descriptor.id
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 301);
        assert!(
            read.values()
                .any(|t| t.contains("Parameters: zeta: last; alpha"))
        );
    }

    /// A load that changes nothing leaves the snapshot as it was (no
    /// read-back); one after a store write whose snapshot was never
    /// published reads the store back all the same.
    #[test]
    fn an_unchanged_load_keeps_the_snapshot_unless_one_is_pending() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let engine = Engine::open(EngineOptions::memory(Embeddings::Custom(Arc::new(
            crate::embed::HashEmbedder::new(),
        ))))
        .unwrap();
        let ontology = [root.join("ontology"), root.join("seeds")];
        let first = engine.load_paths(&ontology, None).unwrap();
        assert!(!first.store.unchanged);
        let built = engine.snapshot();
        let again = engine.load_paths(&ontology, None).unwrap();
        assert!(again.store.unchanged, "{:?}", again.store);
        assert!(Arc::ptr_eq(&built, &engine.snapshot()), "read back again");
        let sync = again.embeddings.expect("a sync report");
        assert_eq!((sync.embedded, sync.reused), (0, sync.total), "{sync:?}");
        assert!(
            sync.total > 0 && sync.total == engine.catalog_size(),
            "{sync:?}"
        );
        let reloaded = engine.reload(&ontology).unwrap();
        assert!(reloaded.store.unchanged);
        assert!(Arc::ptr_eq(&built, &engine.snapshot()));
        // a write whose snapshot is pending (as after a failed publish)
        engine.current.store(false, AtomicOrdering::Release);
        engine.load_paths(&ontology, None).unwrap();
        assert!(!Arc::ptr_eq(&built, &engine.snapshot()), "not read back");
        assert!(engine.current.load(AtomicOrdering::Acquire));
    }
}
