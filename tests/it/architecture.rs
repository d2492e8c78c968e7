//! The house rules the code keeps, checked on its text: the transports
//! reach the engine only through its service face, and every file and
//! function stays small enough to read.

use crate::common::root;
use std::path::{Path, PathBuf};

/// Modules behind the service face: a transport never names them.
const BEHIND_THE_FACE: &[&str] = &[
    "rank",
    "embed",
    "policy",
    "select",
    "catalog",
    "scope",
    "graph",
    "extract",
    "lexical",
    "import",
    "constellation",
    "session",
    "vocab",
];

/// The longest a file may be (lines), but the lemma tables.
const MAX_FILE_LINES: usize = 700;
/// The longest a function may be (lines, signature to closing brace).
const MAX_FN_LINES: usize = 100;
/// Data, not logic: the lemmatiser's exception tables.
const TABLES: &[&str] = &["src/extract/lemma.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            // Build output (the fuzz crate's own `target/`) is not ours.
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn files(under: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in under {
        rust_files(&root().join(d), &mut out);
    }
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The text with comments, strings (raw ones too) and char literals blanked
/// out, newlines kept: braces and paths in them do not count.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let keep_newlines = |s: &str, out: &mut String| {
        out.extend(std::iter::repeat_n('\n', s.matches('\n').count()));
    };
    while i < b.len() {
        let rest = &src[i..];
        let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            keep_newlines(&rest[..end], &mut out);
            i += end;
        } else if let Some((start, hashes)) = raw_string_start(rest).filter(|_| !word_before) {
            let close = format!("\"{}", "#".repeat(hashes));
            let end = rest[start + 1..]
                .find(&close)
                .map_or(rest.len(), |e| start + 1 + e + close.len());
            out.push_str("\"\"");
            keep_newlines(&rest[..end], &mut out);
            i += end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            keep_newlines(&src[i..(j + 1).min(src.len())], &mut out);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{1f}'), not a lifetime.
            let lit = rest
                .char_indices()
                .skip(1)
                .find(|&(_, c)| c == '\'')
                .map(|(e, _)| e)
                .filter(|&e| e <= 10 && !rest[1..e].contains(' '));
            match lit {
                Some(e) if e > 1 => {
                    out.push_str("''");
                    i += e + 1;
                }
                _ => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Where a raw string (`r"`, `r#"`, `br##"`…) opens: the index of its
/// quote and its number of `#`s.
fn raw_string_start(rest: &str) -> Option<(usize, usize)> {
    let after_b = rest.strip_prefix('b').unwrap_or(rest);
    let after_r = after_b.strip_prefix('r')?;
    let hashes = after_r.chars().take_while(|&c| c == '#').count();
    after_r[hashes..]
        .starts_with('"')
        .then(|| (rest.len() - after_r.len() + hashes, hashes))
}

/// Each function's name, first line and length in lines.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let after = [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ]
        .iter()
        .fold(t, |t, p| t.strip_prefix(p).unwrap_or(t));
        let Some(rest) = after.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut started) = (0i32, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if started && depth <= 0 {
                out.push((name.clone(), i + 1, j - i + 1));
                break;
            }
            if !started && l.trim_end().ends_with(';') {
                break;
            }
        }
    }
    out
}

#[test]
fn transports_reach_the_engine_only_through_its_service_face() {
    let mut found = Vec::new();
    for file in files(&["src/server", "src/cli"]) {
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for (n, line) in code.lines().enumerate() {
            for prefix in ["crate::", "toolgraph::"] {
                for module in BEHIND_THE_FACE {
                    let path = format!("{prefix}{module}");
                    let named = line.match_indices(&path).any(|(at, _)| {
                        !line[at + path.len()..]
                            .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    });
                    if named {
                        found.push(format!("{}:{}: {}", relative(&file), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "transports name modules behind the engine:\n{}",
        found.join("\n")
    );
}

#[test]
fn files_and_functions_stay_small() {
    let mut long = Vec::new();
    for file in files(&["src", "tests", "benches", "fuzz"]) {
        let rel = relative(&file);
        let text = std::fs::read_to_string(&file).unwrap();
        let table = TABLES.contains(&rel.as_str());
        let is_test = rel.starts_with("tests/");
        if !table && !is_test && text.lines().count() > MAX_FILE_LINES {
            long.push(format!("{rel}: {} lines", text.lines().count()));
        }
        if table {
            continue;
        }
        for (name, line, len) in functions(&code_only(&text)) {
            if len > MAX_FN_LINES {
                long.push(format!("{rel}:{line}: fn {name} is {len} lines"));
            }
        }
    }
    assert!(long.is_empty(), "over the limits:\n{}", long.join("\n"));
}

#[test]
fn the_checks_see_what_they_look_for() {
    let code = code_only(
        "fn a() {\n    let s = \"}\"; // }\n    let r = r#\"{{\"#;\n    '{';\n}\nfn b<'x>(v: &'x str) {}\n",
    );
    let fns = functions(&code);
    assert_eq!(fns, vec![("a".to_string(), 1, 5), ("b".to_string(), 6, 1)]);
    let code =
        code_only("fn d() {\n    loop {\n        break;\n    }\n    let b = br#\"}\"#;\n}\n");
    assert_eq!(functions(&code), vec![("d".to_string(), 1, 6)]);
    let long = format!("fn c() {{\n{}}}\n", "    x();\n".repeat(120));
    assert_eq!(functions(&code_only(&long))[0].2, 122);
}
