//! Reading what a source offers, bounded: a file, a folder of manifests, an
//! http(s) URL, or an MCP server's `tools/list` over Streamable HTTP (with
//! pagination). Every read has a time limit and a size limit, follows no
//! redirect (a redirect is another location, which an operator has not
//! configured) and uses no proxy from the environment: the only hosts
//! contacted are the ones named. A folder is walked without following
//! symbolic links and stops at a number of entries and a depth, so a source
//! pointed at `/` by mistake answers at once instead of reading the disk.
//! What may be reached at all (public addresses, pinned; files under the
//! source root) is [`Reach`]'s to say, for every read here.

use super::reach::{PinnedResolver, Reach};
use crate::error::{Error, Field, Result};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long and how much one read may take.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub timeout: Duration,
    pub max_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(20),
            max_bytes: 16 << 20,
        }
    }
}

/// MCP protocol version announced by the client.
const MCP_VERSION: &str = "2025-06-18";
/// Pages of `tools/list` read at most.
const MAX_PAGES: usize = 100;

pub(crate) fn is_url(location: &str) -> bool {
    location.starts_with("http://") || location.starts_with("https://")
}

/// An agent that connects only to the addresses `reach` allows, as
/// resolved once ([`PinnedResolver`]).
fn agent(timeout: Duration, reach: &Reach) -> ureq::Agent {
    pinned_agent(
        timeout,
        reach,
        concat!("toolgraph-airlock/", env!("CARGO_PKG_VERSION")),
    )
}

/// An agent that connects only to the addresses `reach` allows, resolved
/// once and pinned; no redirect followed, no proxy from the environment,
/// `timeout` for a whole request; HTTP errors are answers, not errors.
pub(crate) fn pinned_agent(timeout: Duration, reach: &Reach, user_agent: &str) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .max_redirects_will_error(false)
        .http_status_as_error(false)
        .proxy(None)
        .user_agent(user_agent)
        .build();
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::default(),
        PinnedResolver {
            reach: std::sync::Arc::new(reach.clone()),
        },
    )
}

fn net_err(location: &str, e: impl Into<crate::error::BoxError>) -> Error {
    Error::unavailable(location, e)
}

fn check_status(location: &str, resp: &ureq::http::Response<ureq::Body>) -> Result<()> {
    let status = resp.status().as_u16();
    if (300..400).contains(&status) {
        let to = resp
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("?");
        return Err(net_err(
            location,
            format!("redirected ({status}) to {to}: not followed; configure that location instead"),
        ));
    }
    if !(200..300).contains(&status) {
        return Err(net_err(location, format!("answered HTTP {status}")));
    }
    Ok(())
}

/// The text at a location: an http(s) URL or a file path under the
/// source root.
pub fn text(location: &str, bounds: Bounds, reach: &Reach) -> Result<String> {
    if is_url(location) {
        reach.check_url(location, Field::SourceLocation)?;
        let mut resp = agent(bounds.timeout, reach)
            .get(location)
            .call()
            .map_err(|e| net_err(location, e))?;
        check_status(location, &resp)?;
        resp.body_mut()
            .with_config()
            .limit(bounds.max_bytes)
            .read_to_string()
            .map_err(|e| net_err(location, e))
    } else {
        let path = reach.file(location, Field::SourceLocation)?;
        read_file(&path, bounds.max_bytes)?.map_err(|len| {
            Error::invalid(format!(
                "{location}: {len} bytes, over the {} byte limit of a scan",
                bounds.max_bytes
            ))
        })
    }
}

/// A file's text, or its length when that is over `max_bytes`.
fn read_file(path: &Path, max_bytes: u64) -> Result<std::result::Result<String, u64>> {
    let len = std::fs::metadata(path)
        .map_err(|e| file_err(path, e))?
        .len();
    if len > max_bytes {
        return Ok(Err(len));
    }
    std::fs::read_to_string(path)
        .map(Ok)
        .map_err(|e| file_err(path, e))
}

/// A file or folder of a source that could not be read: text that is not
/// UTF-8 is the operator's to fix (invalid); anything else (gone, no
/// permission) is the source being unavailable, as for a URL.
fn file_err(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::InvalidData {
        Error::invalid(format!("{}: not UTF-8 text", path.display()))
    } else {
        Error::unavailable(path.display().to_string(), e)
    }
}

/// Folder entries looked at, at most, in one folder source.
pub const MAX_FOLDER_ENTRIES: usize = 10_000;
/// Folders nested deeper than this below a folder source are not read.
pub const MAX_FOLDER_DEPTH: usize = 8;

/// The manifests (`.json`, `.jsonl`, `.ndjson`, `.yaml`, `.yml`) under a
/// folder, in path order, with their text. Entries whose name starts with a
/// dot are skipped, and so are symbolic links to folders (a link can loop, or
/// lead out of the folder the operator named). The whole read shares one
/// deadline and one byte budget; more than [`MAX_FOLDER_ENTRIES`] entries or
/// a folder deeper than [`MAX_FOLDER_DEPTH`] is an error naming the folder,
/// not a partial read.
pub fn folder(location: &str, bounds: Bounds, reach: &Reach) -> Result<Vec<(PathBuf, String)>> {
    let root = reach.file(location, Field::SourceLocation)?;
    let deadline = Instant::now() + bounds.timeout;
    let late = || {
        Error::Timeout(format!(
            "{location}: not read within {} s",
            bounds.timeout.as_secs_f32()
        ))
    };
    let mut files = Vec::new();
    let mut seen = 0usize;
    let mut stack = vec![(root, 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| file_err(&dir, e))? {
            let entry = entry.map_err(|e| file_err(&dir, e))?;
            seen += 1;
            if seen > MAX_FOLDER_ENTRIES {
                return Err(Error::invalid(format!(
                    "{location}: more than {MAX_FOLDER_ENTRIES} entries; name the folder that holds the manifests"
                )));
            }
            if Instant::now() > deadline {
                return Err(late());
            }
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let kind = entry.file_type().map_err(|e| file_err(&entry.path(), e))?;
            entries.push((entry.path(), kind));
        }
        // Sorted, so which entry trips a bound does not depend on the file
        // system's order (the files are sorted once more at the end).
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, kind) in entries {
            if kind.is_dir() {
                if depth + 1 > MAX_FOLDER_DEPTH {
                    return Err(Error::invalid(format!(
                        "{location}: folders nested deeper than {MAX_FOLDER_DEPTH} ({})",
                        path.display()
                    )));
                }
                stack.push((path, depth + 1));
            } else if is_manifest(&path) && (kind.is_file() || path.is_file()) {
                // A link to a file is followed only while it stays inside.
                if kind.is_symlink() && !reach.inside(&path) {
                    return Err(Error::invalid_field(
                        Field::SourceLocation,
                        format!(
                            "{location}: {} links out of the source root",
                            path.display()
                        ),
                    ));
                }
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::with_capacity(files.len());
    let mut left = bounds.max_bytes;
    for path in files {
        if Instant::now() > deadline {
            return Err(late());
        }
        let text = read_file(&path, left)?.map_err(|_| {
            Error::invalid(format!(
                "{location}: more than {} bytes of manifests",
                bounds.max_bytes
            ))
        })?;
        left = left.saturating_sub(text.len() as u64);
        out.push((path, text));
    }
    Ok(out)
}

fn is_manifest(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .is_some_and(|e| matches!(e.as_str(), "json" | "jsonl" | "ndjson" | "yaml" | "yml"))
}

/// The outcome of a health probe.
#[derive(Debug, Clone)]
pub struct Probe {
    pub ok: bool,
    pub latency_ms: f64,
    pub error: Option<String>,
}

/// GETs `url`; healthy when it answers 2xx within `timeout`.
pub fn probe(url: &str, timeout: Duration, reach: &Reach) -> Probe {
    let started = Instant::now();
    if let Err(e) = reach.check_url(url, Field::SourceHealthUrl) {
        return Probe {
            ok: false,
            latency_ms: 0.0,
            error: Some(e.to_string()),
        };
    }
    let outcome = agent(timeout, reach).get(url).call();
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        Ok(resp) if resp.status().is_success() => Probe {
            ok: true,
            latency_ms,
            error: None,
        },
        Ok(resp) => Probe {
            ok: false,
            latency_ms,
            error: Some(format!("HTTP {}", resp.status().as_u16())),
        },
        Err(e) => Probe {
            ok: false,
            latency_ms,
            error: Some(e.to_string()),
        },
    }
}

/// The status `url` answers a GET with (any status: the server is up).
pub(crate) fn probe_status(
    url: &str,
    timeout: Duration,
    reach: &Reach,
) -> std::result::Result<u16, String> {
    reach
        .check_url(url, Field::SourceHealthUrl)
        .map_err(|e| e.to_string())?;
    agent(timeout, reach)
        .get(url)
        .call()
        .map(|r| r.status().as_u16())
        .map_err(|e| e.to_string())
}

/// A Streamable HTTP MCP session (initialize, then requests): the
/// airlock's `tools/list` and the gateway's `tools/call`.
pub(crate) struct McpSession {
    url: String,
    agent: ureq::Agent,
    session: Option<String>,
    /// Sent with every message (an upstream's credentials); never logged.
    headers: Vec<(String, String)>,
    pub(crate) deadline: Instant,
    pub(crate) max_bytes: u64,
    next_id: u64,
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSession")
            .field("url", &self.url)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl McpSession {
    /// Opens a session on `url` (initialize, initialized), within `bounds`
    /// and what `reach` allows, sending `headers` with every message.
    pub(crate) fn open(
        url: &str,
        bounds: Bounds,
        reach: &Reach,
        headers: Vec<(String, String)>,
    ) -> Result<McpSession> {
        if !is_url(url) {
            return Err(Error::invalid_field(
                Field::SourceLocation,
                format!("an MCP server is an http(s) URL, not `{url}`"),
            ));
        }
        reach.check_url(url, Field::SourceLocation)?;
        let mut s = McpSession {
            url: url.to_string(),
            agent: agent(bounds.timeout, reach),
            session: None,
            headers,
            deadline: Instant::now() + bounds.timeout,
            max_bytes: bounds.max_bytes,
            next_id: 0,
        };
        s.request(
            "initialize",
            json!({
                "protocolVersion": MCP_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "toolgraph", "version": env!("CARGO_PKG_VERSION")}
            }),
        )?;
        s.notify("notifications/initialized")?;
        Ok(s)
    }

    fn post(&mut self, message: &Value) -> Result<ureq::http::Response<ureq::Body>> {
        if Instant::now() >= self.deadline {
            return Err(net_err(&self.url, "the scan's time limit ran out"));
        }
        let mut req = self
            .agent
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(s) = &self.session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", MCP_VERSION);
        }
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = req
            .send(message.to_string())
            .map_err(|e| net_err(&self.url, e))?;
        check_status(&self.url, &resp)?;
        Ok(resp)
    }

    /// Sends a request and reads its response (JSON, or the SSE event that
    /// answers it); a JSON-RPC error becomes an error.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut resp = self.post(&json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params
        }))?;
        if self.session.is_none()
            && let Some(s) = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_string());
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        let url = self.url.clone();
        let body = resp.body_mut().with_config().limit(self.max_bytes);
        let message = if sse {
            let mut reader = std::io::BufReader::new(body.reader());
            let mut data = String::new();
            let mut line = String::new();
            let mut found = None;
            loop {
                line.clear();
                let n = reader.read_line(&mut line).map_err(|e| net_err(&url, e))?;
                let l = line.trim_end_matches(['\r', '\n']);
                if n == 0 || l.is_empty() {
                    if !data.is_empty() {
                        if let Ok(v) = serde_json::from_str::<Value>(&data)
                            && v.get("id").and_then(Value::as_u64) == Some(id)
                        {
                            found = Some(v);
                            break;
                        }
                        data.clear();
                    }
                    if n == 0 {
                        break;
                    }
                } else if let Some(d) = l.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(d.strip_prefix(' ').unwrap_or(d));
                }
            }
            found.ok_or_else(|| {
                net_err(&url, format!("no answer to `{method}` in the event stream"))
            })?
        } else {
            let text = body.read_to_string().map_err(|e| net_err(&url, e))?;
            serde_json::from_str(&text)
                .map_err(|e| net_err(&url, format!("`{method}` answered non-JSON: {e}")))?
        };
        if let Some(err) = message.get("error") {
            return Err(net_err(&url, format!("`{method}` failed: {err}")));
        }
        message
            .get("result")
            .cloned()
            .ok_or_else(|| net_err(&url, format!("`{method}` answered without a result")))
    }

    fn notify(&mut self, method: &str) -> Result<()> {
        self.post(&json!({"jsonrpc": "2.0", "method": method}))?;
        Ok(())
    }

    pub(crate) fn close(&mut self) {
        if let Some(s) = self.session.take() {
            let _ = self
                .agent
                .delete(&self.url)
                .header("mcp-session-id", &s)
                .header("mcp-protocol-version", MCP_VERSION)
                .call();
        }
    }
}

/// Every tool an MCP server lists (all pages), as `{"tools": [..]}` in the
/// server's own words.
pub fn mcp_tools(url: &str, bounds: Bounds, reach: &Reach) -> Result<Value> {
    if !is_url(url) {
        return Err(Error::invalid_field(
            Field::SourceLocation,
            format!("an MCP source is an http(s) URL, not `{url}`"),
        ));
    }
    let mut s = McpSession::open(url, bounds, reach, Vec::new())?;
    let result = (|| {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = s.request("tools/list", params)?;
            if let Some(list) = page.get("tools").and_then(Value::as_array) {
                tools.extend(list.iter().cloned());
            }
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_string);
            if cursor.is_none() {
                return Ok(json!({ "tools": tools }));
            }
        }
        Err(net_err(
            url,
            format!("more than {MAX_PAGES} pages of tools"),
        ))
    })();
    s.close();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file readable (these tests are about the folder walk).
    fn anywhere() -> Reach {
        Reach {
            source_root: Some(PathBuf::from("/")),
            ..Reach::default()
        }
    }
    use std::fs;

    fn bounds() -> Bounds {
        Bounds {
            timeout: Duration::from_secs(20),
            max_bytes: 1 << 20,
        }
    }

    fn names(found: &[(PathBuf, String)], root: &Path) -> Vec<String> {
        found
            .iter()
            .map(|(p, _)| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn a_folder_yields_its_manifests_in_path_order_without_hidden_entries_or_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("b/c")).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join("b/c/tools.yaml"), "openapi: 3.0.0").unwrap();
        fs::write(root.join("a.json"), "{\"tools\": []}").unwrap();
        fs::write(root.join("b/notes.txt"), "not a manifest").unwrap();
        fs::write(root.join(".git/config.json"), "{}").unwrap();
        fs::write(root.join(".hidden.json"), "{}").unwrap();
        // A link back to the folder itself would loop forever if followed.
        std::os::unix::fs::symlink(root, root.join("b/loop")).unwrap();
        let found = folder(root.to_str().unwrap(), bounds(), &anywhere()).unwrap();
        assert_eq!(names(&found, root), ["a.json", "b/c/tools.yaml"]);
        assert_eq!(found[0].1, "{\"tools\": []}");
    }

    #[test]
    fn a_folder_over_its_entry_depth_or_byte_bound_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let wide = dir.path().join("wide");
        fs::create_dir(&wide).unwrap();
        for i in 0..=MAX_FOLDER_ENTRIES {
            fs::write(wide.join(format!("{i}.txt")), "").unwrap();
        }
        let e = folder(wide.to_str().unwrap(), bounds(), &anywhere()).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e:?}");
        assert!(e.to_string().contains("more than 10000 entries"), "{e}");
        assert!(e.to_string().contains("wide"), "{e}");

        let deep = dir.path().join("deep");
        let mut d = deep.clone();
        for i in 0..=MAX_FOLDER_DEPTH {
            d = d.join(i.to_string());
        }
        fs::create_dir_all(&d).unwrap();
        let e = folder(deep.to_str().unwrap(), bounds(), &anywhere()).unwrap_err();
        assert!(e.to_string().contains("nested deeper than 8"), "{e}");

        let big = dir.path().join("big");
        fs::create_dir(&big).unwrap();
        fs::write(big.join("a.json"), "x".repeat(600)).unwrap();
        fs::write(big.join("b.json"), "x".repeat(600)).unwrap();
        let small = Bounds {
            max_bytes: 1000,
            ..bounds()
        };
        let e = folder(big.to_str().unwrap(), small, &anywhere()).unwrap_err();
        assert!(e.to_string().contains("more than 1000 bytes"), "{e}");
    }

    #[test]
    fn a_missing_folder_or_file_is_unavailable_and_bad_text_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let e = folder(gone.to_str().unwrap(), bounds(), &anywhere()).unwrap_err();
        assert!(matches!(e, Error::Unavailable { .. }), "{e:?}");
        assert!(e.to_string().contains("gone"), "{e}");
        let e = text(
            gone.join("api.json").to_str().unwrap(),
            bounds(),
            &anywhere(),
        )
        .unwrap_err();
        assert!(matches!(e, Error::Unavailable { .. }), "{e:?}");
        let latin1 = dir.path().join("latin1.json");
        fs::write(&latin1, b"{\"d\": \"caf\xe9\"}").unwrap();
        let e = text(latin1.to_str().unwrap(), bounds(), &anywhere()).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e:?}");
        assert!(e.to_string().contains("not UTF-8"), "{e}");
    }
}
