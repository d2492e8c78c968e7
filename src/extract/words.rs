//! Small closed word lists: function words, common imperative verbs, and
//! the verbs that make a tool read-only.

/// Function words: never proper nouns, never open-vocabulary terms.
pub(crate) fn is_stop(w: &str) -> bool {
    STOP.binary_search(&w).is_ok()
}

/// Lemmas of common English action verbs (used when the ontology has no
/// verb for a tool name, and to recognise `PascalCase` identifiers).
pub(crate) fn is_common_verb(lemma: &str) -> bool {
    COMMON_VERBS.binary_search(&lemma).is_ok()
}

/// Lemmas of verbs whose tools only read (`get`, `list`, `search` …).
pub(crate) fn is_read_verb(lemma: &str) -> bool {
    READ_VERBS.binary_search(&lemma).is_ok()
}

/// Sorted (checked by a test).
const STOP: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "e", "each",
    "eg", "either", "etc", "every", "few", "for", "from", "further", "g", "had", "has", "have",
    "he", "hello", "her", "here", "hers", "hey", "hi", "him", "his", "how", "i", "ie", "if",
    "in", "into", "is", "it", "its", "just", "let", "lets", "may", "me", "might", "mine", "more",
    "most", "must", "my", "no", "nor", "not", "now", "of", "off", "ok", "okay", "on", "once",
    "only", "or", "other", "our", "ours", "out", "over", "own", "please", "same", "shall",
    "she", "should", "so", "some", "such", "than", "thank", "thanks", "that", "the", "their",
    "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "upon", "us", "very", "via", "was", "we", "were", "what", "when",
    "where", "whether", "which", "while", "who", "whom", "whose", "why", "will", "with",
    "within", "without", "would", "yes", "yet", "you", "your", "yours",
];

/// Sorted (checked by a test).
const COMMON_VERBS: &[&str] = &[
    "accept", "access", "activate", "add", "adjust", "allocate", "analyze", "annotate",
    "answer", "apply", "approve", "archive", "arrange", "ask", "assess", "assign", "attach",
    "authenticate", "authorize", "back", "backup", "balance", "ban", "block", "book", "browse",
    "build", "buy", "calculate", "calibrate", "call", "cancel", "capture", "change", "charge",
    "chat", "check", "choose", "classify", "clean", "clear", "close", "collect", "compare",
    "compile", "complete", "compose", "compress", "compute", "conduct", "configure", "confirm",
    "connect", "control", "convert", "copy", "count", "create", "customize", "debug", "decode",
    "decrypt", "delete", "deliver", "deploy", "describe", "design", "detect", "determine",
    "diagnose", "disable", "display", "donate", "download", "draft", "draw", "edit", "email",
    "enable", "encode", "encrypt", "end", "enroll", "estimate", "evaluate", "execute", "explain",
    "explore", "export", "extract", "fetch", "file", "fill", "filter", "find", "finish", "fix",
    "flag", "follow", "forecast", "format", "generate", "get", "give", "help", "hide", "hire",
    "identify", "import", "improve", "initiate", "insert", "install", "interpret", "invite",
    "issue", "join", "launch", "learn", "leave", "like", "list", "load", "locate", "lock",
    "log", "login", "logout", "look", "lookup", "make", "manage", "map", "mark", "measure",
    "merge", "message", "migrate", "modify", "monitor", "move", "mute", "notify", "open",
    "optimize", "order", "organize", "parse", "pause", "pay", "perform", "pin", "place", "plan",
    "play", "post", "predict", "prepare", "print", "process", "proofread", "provide", "publish",
    "purchase", "query", "rank", "rate", "read", "receive", "recognize", "recommend", "record",
    "redeem", "refresh", "refund", "register", "reject", "reload", "remind", "remove", "rename",
    "render", "renew", "rent", "reorder", "repair", "replace", "reply", "report", "request",
    "reschedule", "reserve", "reset", "resize", "resolve", "restart", "restore", "resume",
    "retrieve", "return", "review", "revoke", "rotate", "run", "save", "scale", "scan",
    "schedule", "score", "search", "select", "sell", "send", "set", "setup", "share", "ship",
    "show", "sign", "simulate", "solve", "sort", "split", "start", "stop", "store", "stream",
    "submit", "subscribe", "suggest", "summarize", "suspend", "switch", "sync", "take", "test",
    "text", "toggle", "track", "train", "transcribe", "transfer", "transform", "translate",
    "troubleshoot", "turn", "unblock", "unlock", "unsubscribe", "update", "upgrade", "upload",
    "validate", "verify", "view", "visualize", "volunteer", "vote", "watch", "write",
];

/// Sorted (checked by a test).
const READ_VERBS: &[&str] = &[
    "analyze", "browse", "calculate", "check", "classify", "compare", "compute", "convert",
    "count", "describe", "detect", "determine", "diagnose", "display", "estimate", "evaluate",
    "explain", "explore", "fetch", "find", "forecast", "get", "identify", "inspect", "interpret",
    "list", "locate", "look", "lookup", "measure", "monitor", "predict", "preview", "query",
    "read", "recognize", "recommend", "retrieve", "review", "search", "show", "simulate",
    "suggest", "summarize", "track", "translate", "validate", "verify", "view", "visualize",
    "watch",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_sorted() {
        for l in [STOP, COMMON_VERBS, READ_VERBS] {
            assert!(l.windows(2).all(|w| w[0] < w[1]), "{:?}", l.windows(2).find(|w| w[0] >= w[1]));
        }
        assert!(is_stop("the") && is_common_verb("book") && is_read_verb("get"));
    }
}
