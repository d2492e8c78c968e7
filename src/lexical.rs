//! Lexical channel: BM25 over tool text and the exact-name guarantee.
//!
//! * [`tokenize`] turns text into lowercase word tokens, splitting
//!   identifiers (`getWeatherForecast`, `Movies_1_FindMovies`,
//!   `triangle_properties.get`, `task-create`, `HTTPServer2`) into words.
//! * [`Bm25`] is Okapi BM25 (idf `ln((N - df + 0.5) / (df + 0.5) + 1)`,
//!   default `k1 = 1.2`, `b = 0.75`) over postings lists. Stopwords
//!   ([`is_stopword`]) are dropped from documents and queries and query
//!   terms count once, which is the reference run shipped with the accuracy
//!   datasets (`benches/datasets/*/README.txt`).
//! * [`NameIndex`] finds tools the request names as an identifier (any
//!   casing or separator style), quoted, or as the whole request, so a named
//!   tool is never lost by ranking.

use crate::scope::Scope;
use std::collections::{HashMap, HashSet};

/// BM25 accumulators (one slot per document), all 0 between searches.
static ACCUMULATORS: crate::scratch::Clean<f32> = crate::scratch::Clean::new(0.0);

/// One query's BM25 scores: one per document (0 where it shares no term),
/// and the documents it touched (a bit each: at a million tools a common
/// term touches hundreds of thousands, and a list of them was written and
/// read again by every reader).
#[derive(Debug, Default)]
pub struct Hits {
    scores: Vec<f32>,
    touched: Scope,
}

impl Hits {
    /// One score per document (empty when nothing was scored).
    pub fn scores(&self) -> &[f32] {
        &self.scores
    }

    /// The documents sharing a term with the query.
    pub fn touched(&self) -> &Scope {
        &self.touched
    }

    /// Document `d`'s score (0 past the end).
    pub fn get(&self, d: usize) -> f32 {
        self.scores.get(d).copied().unwrap_or(0.0)
    }
}

/// The accumulator goes back to its pool, its touched slots set back to 0.
impl Drop for Hits {
    fn drop(&mut self) {
        let scores = std::mem::take(&mut self.scores);
        if !scores.is_empty() {
            ACCUMULATORS.restore(scores, self.touched.members());
        }
    }
}

/// Splits `text` into lowercase word tokens.
///
/// Non-alphanumeric characters separate tokens (and are dropped); inside a
/// run of alphanumerics a new token starts at a lower→upper case change
/// (`getWeather` → `get weather`), before the last capital of an acronym
/// followed by lowercase (`HTTPServer` → `http server`) and at every
/// letter↔digit change (`Movies1` → `movies 1`). Stopwords are kept.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut cur, &mut out);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p))
            && prev.is_alphanumeric()
        {
            let next = chars.get(i + 1).copied();
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_numeric() != c.is_numeric())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(|n| n.is_lowercase()));
            if boundary {
                flush(&mut cur, &mut out);
            }
        }
        cur.extend(c.to_lowercase());
    }
    flush(&mut cur, &mut out);
    out
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    if !cur.is_empty() {
        out.push(std::mem::take(cur));
    }
}

/// English function words ignored by [`Bm25`] (not by [`tokenize`]).
const STOPWORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "been", "by", "can", "could",
    "did", "do", "does", "for", "from", "he", "how", "i", "if", "in", "into", "is", "it", "me",
    "my", "no", "not", "of", "on", "or", "please", "she", "should", "so", "some", "than", "that",
    "the", "them", "then", "these", "they", "this", "those", "to", "was", "we", "were", "what",
    "which", "who", "will", "with", "would", "you", "your",
];

/// Whether BM25 ignores this (lowercase) token.
pub fn is_stopword(token: &str) -> bool {
    STOPWORDS.binary_search(&token).is_ok()
}

fn content_tokens(text: &str) -> impl Iterator<Item = String> {
    tokenize(text).into_iter().filter(|t| !is_stopword(t))
}

/// Okapi BM25 index over a fixed list of documents (one per tool).
#[derive(Debug, Clone)]
pub struct Bm25 {
    vocab: HashMap<String, u32>,
    /// Per term: (document, the term's saturated frequency in it,
    /// `tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))`),
    /// documents ascending. A search multiplies it by the term's idf: no
    /// per-document length to look up and no division per posting (at a
    /// million tools a common term has hundreds of thousands).
    postings: Vec<Vec<(u32, f32)>>,
    idf: Vec<f32>,
    /// Documents indexed.
    docs: usize,
}

impl Bm25 {
    /// Index `docs` with `k1 = 1.2`, `b = 0.75`.
    pub fn new(docs: &[String]) -> Self {
        Self::with_params(docs, 1.2, 0.75)
    }

    /// Index `docs` with the given BM25 parameters.
    pub fn with_params(docs: &[String], k1: f32, b: f32) -> Self {
        let mut vocab: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut lens = Vec::with_capacity(docs.len());
        for (d, doc) in docs.iter().enumerate() {
            let d = u32::try_from(d).unwrap_or(u32::MAX);
            let mut tf: HashMap<u32, u32> = HashMap::new();
            let mut len = 0usize;
            for tok in content_tokens(doc) {
                len += 1;
                let next = u32::try_from(vocab.len()).unwrap_or(u32::MAX);
                let id = *vocab.entry(tok).or_insert(next);
                if id == next {
                    postings.push(Vec::new());
                }
                *tf.entry(id).or_insert(0) += 1;
            }
            let mut tf: Vec<(u32, u32)> = tf.into_iter().collect();
            tf.sort_unstable();
            for (id, f) in tf {
                if let Some(p) = postings.get_mut(id as usize) {
                    p.push((d, f));
                }
            }
            lens.push(len as f32);
        }
        let n = docs.len() as f32;
        let avg = if docs.is_empty() {
            1.0
        } else {
            (lens.iter().sum::<f32>() / n).max(f32::MIN_POSITIVE)
        };
        let idf = postings
            .iter()
            .map(|p| {
                let df = p.len() as f32;
                ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
            })
            .collect();
        let norm: Vec<f32> = lens.iter().map(|&l| k1 * (1.0 - b + b * l / avg)).collect();
        let postings = postings
            .into_iter()
            .map(|p| {
                let mut p: Vec<(u32, f32)> = p
                    .into_iter()
                    .map(|(d, f)| {
                        let (f, norm) = (f as f32, norm.get(d as usize).copied().unwrap_or(k1));
                        (d, f * (k1 + 1.0) / (f + norm))
                    })
                    .collect();
                // Kept for the snapshot's life: no room to grow (a long
                // list pushed one by one held up to twice its length, and
                // collecting in place keeps that room).
                p.shrink_to_fit();
                p
            })
            .collect();
        Bm25 {
            vocab,
            postings,
            idf,
            docs: docs.len(),
        }
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        self.docs
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Adds the query's score to `acc` (dense, one slot per doc); the
    /// documents it touched, as a set (read back ascending, not sorted: a
    /// common term touches tens of thousands of documents at 100k tools).
    fn accumulate(&self, query: &str, acc: &mut [f32]) -> Scope {
        let mut seen = HashSet::new();
        let mut touched = Scope::none(acc.len());
        for tok in content_tokens(query) {
            let Some(&id) = self.vocab.get(&tok) else {
                continue;
            };
            if !seen.insert(id) {
                continue;
            }
            let idf = self.idf.get(id as usize).copied().unwrap_or(0.0);
            for &(d, w) in self.postings.get(id as usize).map_or(&[][..], |p| p) {
                if let Some(slot) = acc.get_mut(d as usize) {
                    *slot += idf * w;
                    touched.insert(d as usize);
                }
            }
        }
        touched
    }

    /// BM25 score of every document for `query`, in document order
    /// (0 for documents sharing no term with the query).
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let mut acc = vec![0.0; self.len()];
        self.accumulate(query, &mut acc);
        acc
    }

    /// [`Self::scores`] and the documents sharing a term with the query.
    /// Its catalog-sized accumulator is reused by the next
    /// search once the hits are dropped.
    pub fn hits(&self, query: &str) -> Hits {
        let mut scores = ACCUMULATORS.take(self.len());
        let touched = self.accumulate(query, &mut scores);
        Hits { scores, touched }
    }

    /// The `k` best documents as `(index, score)`, score descending, ties by
    /// index ascending, restricted to documents for which `allow` returns
    /// true. This is the head of the total order over all allowed documents:
    /// when fewer than `k` documents match, zero-score documents follow in
    /// index order (callers wanting matches only filter `score > 0`).
    pub fn top_k(
        &self,
        query: &str,
        k: usize,
        allow: Option<&dyn Fn(usize) -> bool>,
    ) -> Vec<(usize, f32)> {
        if k == 0 {
            return Vec::new();
        }
        let allowed = |d: usize| allow.is_none_or(|f| f(d));
        let mut acc = vec![0.0f32; self.len()];
        let touched = self.accumulate(query, &mut acc);
        let mut hits: Vec<(usize, f32)> = touched
            .iter()
            .filter(|&d| allowed(d))
            .filter_map(|d| acc.get(d).map(|&s| (d, s)))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, order);
            hits.truncate(k);
        }
        hits.sort_unstable_by(order);
        if hits.len() < k {
            let have: HashSet<usize> = hits.iter().map(|h| h.0).collect();
            let pad = (0..self.len())
                .filter(|d| !have.contains(d) && allowed(*d))
                .take(k - hits.len())
                .map(|d| (d, acc.get(d).copied().unwrap_or(0.0)));
            hits.extend(pad.collect::<Vec<_>>());
        }
        hits
    }
}

/// Exact-name guarantee: which tools a request names explicitly.
///
/// Names and requests are compared as [`tokenize`] token sequences, so
/// `task_create`, `TaskCreate` and `task-create` are the same name. A tool
/// matches when
/// * the whole request is its name (`"TaskCreate"`, `"weather"`,
///   `"task create"`), or
/// * one identifier of the request is its name: `"call task_create now"`,
///   `"use taskCreate."`, or a dotted path ending in it
///   (`"tools.task_create"`), but not `"run task_create_bulk"` (part of a
///   longer identifier), or
/// * the name is quoted verbatim: ``"use `weather`"``, `"the 'task create' tool"`.
///
/// Plain words that happen to spell a name do not count: "get the current
/// weather" does not name `get_current_weather`, and "what's the weather"
/// does not name `weather`. Prose is the ranking channels' job; the
/// guarantee is for a planner that writes the identifier.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    /// Tool indexes hashed by their names' tokens (not a copy of them:
    /// the tokens and a `Vec` per name held ~0.25 KB per tool); a hit is
    /// checked against the name itself.
    by_tokens: hashbrown::HashTable<u32>,
}

/// The hash of a name's tokens.
fn tokens_hash(toks: &[String]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    for t in toks {
        h.write(t.as_bytes());
        h.write_u8(0xff);
    }
    h.finish()
}

impl NameIndex {
    /// Index tool names; a tool's index is its position in `names` (the
    /// first 2^32 − 1).
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        let mut by_tokens = hashbrown::HashTable::with_capacity(names.len());
        let rehash = |&i: &u32| tokens_hash(&tokenize(names[i as usize]));
        for (i, name) in names.iter().enumerate() {
            let toks = tokenize(name);
            match u32::try_from(i) {
                Ok(i) if !toks.is_empty() && i != u32::MAX => {
                    by_tokens.insert_unique(tokens_hash(&toks), i, rehash);
                }
                _ => {}
            }
        }
        NameIndex { by_tokens }
    }

    /// Tools named by `request`, longest name first (then by index);
    /// `name_of` gives back the name indexed for a tool.
    pub fn find<'n>(&self, request: &str, name_of: impl Fn(usize) -> &'n str) -> Vec<usize> {
        // (token count, tool) pairs found
        let mut found: Vec<(usize, usize)> = Vec::new();
        let mut hit = |toks: &[String]| {
            let named = self
                .by_tokens
                .iter_hash(tokens_hash(toks))
                .map(|&i| i as usize)
                .filter(|&i| tokenize(name_of(i)) == toks);
            found.extend(named.map(|i| (toks.len(), i)));
        };
        hit(&tokenize(request));
        for chunk in identifier_chunks(request) {
            let whole = tokenize(chunk);
            if whole.len() > 1 {
                hit(&whole);
                // `module.path.task_create`: every dotted suffix
                for (at, _) in chunk.match_indices('.') {
                    let suffix = tokenize(&chunk[at + 1..]);
                    if suffix.len() > 1 {
                        hit(&suffix);
                    }
                }
            }
        }
        for quoted in quoted_spans(request) {
            hit(&tokenize(quoted));
        }
        found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut seen = HashSet::new();
        found
            .into_iter()
            .filter(|&(_, i)| seen.insert(i))
            .map(|(_, i)| i)
            .collect()
    }
}

/// Maximal runs of alphanumerics and `_ - .` with separators trimmed at the
/// ends: the identifiers and words a request is written in.
fn identifier_chunks(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|s| s.trim_matches(|c: char| matches!(c, '_' | '-' | '.')))
        .filter(|s| !s.is_empty())
}

/// Text between matching backticks or double quotes, and between single
/// quotes that are not apostrophes (`'task create'`, not `it's ... don't`):
/// at most a few words, the way a name is quoted.
fn quoted_spans(text: &str) -> impl Iterator<Item = &str> {
    ['`', '"', '\''].into_iter().flat_map(move |q| {
        let mut spans = Vec::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(open) = rest.find(q) {
            let before = text[..offset + open].chars().next_back();
            let after_open = &rest[open + q.len_utf8()..];
            let Some(close) = after_open.find(q) else {
                break;
            };
            let inner = &after_open[..close];
            let opens_word = before.is_none_or(|c| !c.is_alphanumeric());
            let closes_word = after_open[close + q.len_utf8()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric());
            let short = !inner.trim().is_empty() && inner.split_whitespace().count() <= 6;
            let consumed = if q != '\'' || (opens_word && closes_word && short) {
                spans.push(inner);
                open + q.len_utf8() + close + q.len_utf8()
            } else {
                // an apostrophe: look for a quote from the next character on
                open + q.len_utf8()
            };
            offset += consumed;
            rest = &rest[consumed..];
        }
        spans
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<&str> {
        // helper: leak-free comparison via owned strings
        s.split(' ').filter(|t| !t.is_empty()).collect()
    }

    #[test]
    fn tokenize_splits_identifiers() {
        let cases = [
            ("getWeatherForecast", "get weather forecast"),
            ("Movies_1_FindMovies", "movies 1 find movies"),
            ("triangle_properties.get", "triangle properties get"),
            ("task-create", "task create"),
            ("HTTPServer2", "http server 2"),
            ("getURLForID", "get url for id"),
            ("PDF&URLTool", "pdf url tool"),
            ("Hello, world! It's 3pm.", "hello world it s 3 pm"),
            ("  ", ""),
        ];
        for (input, want) in cases {
            assert_eq!(tokenize(input), toks(want), "{input}");
        }
    }

    #[test]
    fn stopword_list_is_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("the") && !is_stopword("weather") && !is_stopword("get"));
    }

    fn docs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bm25_scores_by_hand() {
        // N = 2, doc0 = [cat, sat] (len 2), doc1 = [dog] (len 1), avg = 1.5
        let bm = Bm25::new(&docs(&["cat sat", "dog"]));
        let s = bm.scores("the cat");
        // idf(cat) = ln((2 - 1 + .5)/(1 + .5) + 1) = ln 2
        // tf part = 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 1.5)) = 2.2 / 2.5
        let want = 2f32.ln() * 2.2 / 2.5;
        assert!((s[0] - want).abs() < 1e-6, "{s:?}");
        assert_eq!(s[1], 0.0);
        // repeated query terms count once
        assert_eq!(bm.scores("cat cat cat"), s);
    }

    #[test]
    fn top_k_orders_filters_and_pads() {
        let bm = Bm25::new(&docs(&["alpha", "beta gamma", "beta", "delta"]));
        let top = bm.top_k("beta", 2, None);
        // doc2 is shorter than doc1, so it scores higher
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![2, 1]);
        let only1 = |d: usize| d != 2;
        let top = bm.top_k("beta", 3, Some(&only1));
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![1, 0, 3]);
        assert_eq!(top[1].1, 0.0);
        assert!(bm.top_k("beta", 0, None).is_empty());
        // ties by index
        let bm = Bm25::new(&docs(&["x y", "x y", "x y"]));
        let top = bm.top_k("x", 3, None);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![0, 1, 2]);
        let empty = Bm25::new(&[]);
        assert!(empty.top_k("x", 3, None).is_empty() && empty.is_empty());
    }

    /// `hits` lists every document sharing a term with the query, once,
    /// ascending (across the words of its bit per document), with the
    /// scores `scores` gives.
    #[test]
    fn hits_lists_the_touched_documents_ascending() {
        let words = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
        ];
        let texts: Vec<String> = (0..300)
            .map(|i| format!("{} {} {}", words[i % 7], words[i % 3], words[i % 5]))
            .collect();
        let bm = Bm25::new(&texts);
        for query in [
            "delta bravo",
            "echo echo alpha",
            "charlie",
            "nothing here",
            "",
        ] {
            let hits = bm.hits(query);
            let scores = hits.scores().to_vec();
            let touched: Vec<usize> = hits.touched().iter().collect();
            assert_eq!(hits.touched().members().len(), touched.len(), "{query}");
            let terms: Vec<String> = content_tokens(query).collect();
            let want: Vec<usize> = (0..texts.len())
                .filter(|&d| content_tokens(&texts[d]).any(|t| terms.contains(&t)))
                .collect();
            assert!(query.is_empty() || query == "nothing here" || want.len() > 64);
            assert_eq!(touched, want, "{query}");
            assert_eq!(scores, bm.scores(query), "{query}");
            assert!(touched.iter().all(|&d| scores[d] > 0.0), "{query}");
        }
    }

    #[test]
    fn indexes_are_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Bm25>();
        assert_send_sync::<NameIndex>();
    }

    proptest::proptest! {
        #[test]
        fn tokenize_never_panics_and_yields_lowercase_words(s in "\\PC{0,40}") {
            for t in tokenize(&s) {
                proptest::prop_assert!(!t.is_empty());
                proptest::prop_assert!(!t.chars().any(char::is_whitespace));
                proptest::prop_assert_eq!(t.to_lowercase(), t.clone());
            }
            let bm = Bm25::new(&[s.clone(), "x".to_string()]);
            let scores = bm.scores(&s);
            proptest::prop_assert!(scores.iter().all(|v| v.is_finite() && *v >= 0.0));
            let _ = NameIndex::new([s.as_str()]).find(&s, |_| s.as_str());
        }
    }

    /// A name index with its names.
    struct Named<'a>(&'a NameIndex, &'a [&'a str]);

    impl Named<'_> {
        fn find(&self, request: &str) -> Vec<usize> {
            self.0.find(request, |i| self.1[i])
        }
    }

    #[test]
    fn name_index_finds_named_tools() {
        let names = [
            "task_create",
            "weather",
            "task_create_bulk",
            "Movies_1_FindMovies",
            "search",
        ];
        let index = NameIndex::new(names);
        let idx = Named(&index, &names);
        for req in [
            "call task_create",
            "TaskCreate",
            "task-create",
            "task create",
            "use taskCreate.",
            "call tools.task_create(x=1)",
            "the 'task create' tool",
        ] {
            assert_eq!(idx.find(req), vec![0], "{req}");
        }
        assert!(idx.find("create a task").is_empty());
        assert!(idx.find("task create please").is_empty(), "plain words");
        assert!(idx.find("it's a task create, isn't it").is_empty());
        assert_eq!(idx.find("it's the 'weather' tool"), vec![1]);
        assert_eq!(idx.find("run task_create_bulk now"), vec![2]);
        assert_eq!(idx.find("weather"), vec![1]);
        assert_eq!(idx.find("Weather"), vec![1]);
        assert!(idx.find("what's the weather in Paris").is_empty());
        assert!(idx.find("search the web").is_empty());
        assert_eq!(idx.find("use `weather` for Paris"), vec![1]);
        assert_eq!(
            idx.find("movies_1_find_movies or task_create?"),
            vec![3, 0],
            "longest first"
        );
        assert!(idx.find("").is_empty());
    }
}
