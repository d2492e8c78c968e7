//! all-MiniLM-L6-v2 (int8 ONNX) through fastembed and a dynamically loaded
//! ONNX Runtime, all read from one local directory: nothing is downloaded.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use sha2::{Digest, Sha256};

use super::{Embedder, MODEL_DIR_NAME, normalize};
use crate::error::{Error, Result};

/// ONNX Runtime shared library, copied from the `onnxruntime` wheel.
const ORT_LIB: &str = "libonnxruntime.so";
const MODEL: &str = "model.onnx";
const TOKENIZER: &str = "tokenizer.json";
const CONFIG: &str = "config.json";
const SPECIAL_TOKENS: &str = "special_tokens_map.json";
const TOKENIZER_CONFIG: &str = "tokenizer_config.json";
/// Every file the model directory must hold, in the order they are checked.
const REQUIRED: [&str; 6] = [
    ORT_LIB,
    MODEL,
    TOKENIZER,
    CONFIG,
    SPECIAL_TOKENS,
    TOKENIZER_CONFIG,
];

/// Tokens read per text; MiniLM was trained on 256.
const MAX_LENGTH: usize = 256;
/// Texts per ONNX Runtime call.
const RUN_BATCH: usize = 32;
/// Texts handed to fastembed at once (bounds memory for huge inputs).
const CALL_BATCH: usize = 64;

/// The command that installs the model, named in every "not found" error.
const SETUP_HINT: &str = "run `scripts/setup.sh` to install it";

/// ONNX Runtime allows one environment per process; it is kept here once
/// created so every [`FastEmbedder`] shares it.
static ORT_ENV: Mutex<Option<ort::environment::Environment>> = Mutex::new(None);

/// The real embedder: all-MiniLM-L6-v2 int8, mean pooling, 256 tokens,
/// L2-normalised 384-d vectors. Loaded from a directory prepared by
/// `scripts/setup-model.sh` (see [`crate::default_model_dir`]).
pub struct FastEmbedder {
    model: Mutex<TextEmbedding>,
    /// A second session on one thread, for embedding beside other work
    /// (see [`Embedder::embed_documents_beside`]); made on first use.
    solo: OnceLock<Option<Mutex<TextEmbedding>>>,
    model_id: String,
    dim: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for FastEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastEmbedder")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

fn not_found(dir: &Path, what: &str) -> Error {
    Error::model_msg(format!(
        "embedding model not found at {} (missing {what}); {SETUP_HINT}",
        dir.display()
    ))
}

fn broken(dir: &Path, what: impl std::fmt::Display) -> Error {
    Error::model_msg(format!(
        "embedding model at {} is unusable ({what}); {SETUP_HINT}",
        dir.display()
    ))
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).map_err(|e| broken(dir, format!("{name}: {e}")))?;
    if bytes.is_empty() {
        return Err(not_found(dir, name));
    }
    Ok(bytes)
}

/// Loads ONNX Runtime from `lib` once per process and returns the shared environment.
fn ort_environment(dir: &Path, lib: &Path) -> Result<ort::environment::Environment> {
    let mut slot = ORT_ENV.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(env) = slot.as_ref() {
        return Ok(env.clone());
    }
    let env = ort::init_from(lib)
        .map_err(|e| broken(dir, format!("cannot load ONNX Runtime: {e}")))?
        .with_name("toolgraph")
        .with_telemetry(false)
        .build()
        .map_err(|e| broken(dir, format!("cannot start ONNX Runtime: {e}")))?;
    *slot = Some(env.clone());
    Ok(env)
}

/// Runs `f`, turning a panic inside fastembed/ort into [`Error::Model`].
fn guarded<T>(dir: &Path, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            Err(broken(dir, format!("{what} panicked: {msg}")))
        }
    }
}

/// A session over the model files in `dir` (`threads`: ONNX Runtime's
/// intra-op threads, default one per core) and the model id they make.
fn session(dir: &Path, threads: Option<usize>) -> Result<(String, TextEmbedding)> {
    let onnx = read(dir, MODEL)?;
    let hash = Sha256::digest(&onnx);
    let prefix: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let model_id = format!("{MODEL_DIR_NAME}@{prefix}");
    let tokenizer_files = TokenizerFiles {
        tokenizer_file: read(dir, TOKENIZER)?,
        config_file: read(dir, CONFIG)?,
        special_tokens_map_file: read(dir, SPECIAL_TOKENS)?,
        tokenizer_config_file: read(dir, TOKENIZER_CONFIG)?,
    };
    let model = guarded(dir, "loading the model", || {
        let env = ort_environment(dir, &dir.join(ORT_LIB))?;
        let user_model =
            UserDefinedEmbeddingModel::new(onnx, tokenizer_files).with_pooling(Pooling::Mean);
        let options = InitOptionsUserDefined::new()
            .with_environment(env)
            .with_max_length(MAX_LENGTH)
            // ORT's pool threads spin after a run; a search goes on
            // working right after embedding (the dense pass, fusion), and
            // on 2 cores those spinning threads took its CPU: 10k cold
            // p50 4.03 -> 3.43 ms, 100k 24.8 -> 18.5 ms, floor unchanged.
            .with_session_config("session.force_spinning_stop", "1");
        let options = match threads {
            Some(n) => options.with_intra_threads(n),
            None => options,
        };
        TextEmbedding::try_new_from_user_defined(user_model, options)
            .map_err(|e| broken(dir, format!("cannot load {MODEL}: {e}")))
    })?;
    Ok((model_id, model))
}

impl FastEmbedder {
    /// Loads the model, tokenizer and ONNX Runtime from `model_dir`.
    ///
    /// Every file is checked before fastembed or ort sees it: a missing or
    /// empty file gives [`Error::Model`] naming the file and `scripts/setup.sh`;
    /// a corrupt one gives [`Error::Model`] too, never a panic.
    pub fn load(model_dir: &Path) -> Result<Self> {
        let dir = model_dir;
        if !dir.is_dir() {
            return Err(not_found(dir, "the directory"));
        }
        for name in REQUIRED {
            match std::fs::metadata(dir.join(name)) {
                Ok(m) if m.is_file() && m.len() > 0 => {}
                _ => return Err(not_found(dir, name)),
            }
        }
        let (model_id, mut model) = session(dir, None)?;

        // One probe both learns the dimension and proves the model runs.
        let probe = guarded(dir, "embedding a probe", || {
            model
                .embed(["dimension probe"], Some(1))
                .map_err(|e| broken(dir, format!("model does not run: {e}")))
        })?;
        let dim = probe.first().map_or(0, Vec::len);
        if dim == 0 {
            return Err(broken(dir, "model returned an empty vector"));
        }
        Ok(Self {
            model: Mutex::new(model),
            solo: OnceLock::new(),
            model_id,
            dim,
            dir: dir.to_path_buf(),
        })
    }

    /// The one-thread session, created on first use from the same files;
    /// `None` (with a warning, once) when they changed or it cannot start.
    fn solo(&self) -> Option<&Mutex<TextEmbedding>> {
        self.another(&self.solo, Some(1))
    }

    /// A second session from the same files, made once into `cell`.
    fn another<'s>(
        &self,
        cell: &'s OnceLock<Option<Mutex<TextEmbedding>>>,
        threads: Option<usize>,
    ) -> Option<&'s Mutex<TextEmbedding>> {
        cell.get_or_init(|| match session(&self.dir, threads) {
                Ok((id, model)) if id == self.model_id => Some(Mutex::new(model)),
                Ok((id, _)) => {
                    tracing::warn!(
                        "model files under {} changed ({} is now {id}); not embedding beside other work",
                        self.dir.display(),
                        self.model_id
                    );
                    None
                }
                Err(e) => {
                    tracing::warn!("no second embedding session: {e}");
                    None
                }
            })
            .as_ref()
    }

    /// One text's vector on `session`.
    fn run_one(&self, session: &Mutex<TextEmbedding>, text: &str) -> Result<Vec<f32>> {
        self.run(session, &[text])?
            .pop()
            .ok_or_else(|| Error::model_msg("embedding failed: no vector returned"))
    }

    fn run(&self, session: &Mutex<TextEmbedding>, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        // Texts of similar length share a batch, so a batch pads little
        // (a batch is padded to its longest text).
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let sorted: Vec<&str> = order.iter().map(|&i| texts[i]).collect();
        let mut out = self.run_in_order(session, &sorted)?;
        let mut restored: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for (v, &i) in out.drain(..).zip(&order) {
            restored[i] = v;
        }
        Ok(restored)
    }

    fn run_in_order(
        &self,
        session: &Mutex<TextEmbedding>,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(CALL_BATCH) {
            let vectors = guarded(&self.dir, "embedding", || {
                let mut model = session.lock().unwrap_or_else(PoisonError::into_inner);
                model
                    .embed(chunk, Some(RUN_BATCH))
                    .map_err(|e| Error::model("embedding failed", e))
            })?;
            if vectors.len() != chunk.len() {
                return Err(Error::model_msg(format!(
                    "embedding failed: {} vectors for {} texts",
                    vectors.len(),
                    chunk.len()
                )));
            }
            for mut v in vectors {
                if v.len() != self.dim {
                    return Err(Error::model_msg(format!(
                        "embedding failed: vector of length {} instead of {}",
                        v.len(),
                        self.dim
                    )));
                }
                normalize(&mut v);
                out.push(v);
            }
        }
        Ok(out)
    }
}

impl Embedder for FastEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }
    fn model_id(&self) -> &str {
        &self.model_id
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        self.run_one(&self.model, text)
    }
    fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.run(&self.model, &refs)
    }
    fn embed_documents_beside(&self, texts: &[String]) -> Option<Result<Vec<Vec<f32>>>> {
        let solo = self.solo()?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        Some(self.run(solo, &refs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_dir_and_missing_files_are_clear_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let gone = tmp.path().join("nope");
        let err = FastEmbedder::load(&gone).unwrap_err().to_string();
        assert!(err.contains("scripts/setup.sh"), "{err}");
        assert!(err.contains("missing the directory"), "{err}");

        std::fs::write(tmp.path().join(ORT_LIB), b"").unwrap();
        let err = FastEmbedder::load(tmp.path()).unwrap_err().to_string();
        assert!(err.contains(&format!("missing {ORT_LIB}")), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
}
