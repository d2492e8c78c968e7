//! A live server on loopback for tests, and a small HTTP/1.1 client.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use toolgraph::Engine;
use toolgraph::server::ServeOptions;

/// A server running on a free loopback port until dropped.
pub struct Live {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Live {
    pub fn start(engine: Arc<Engine>, options: ServeOptions) -> Self {
        toolgraph::server::init_tracing();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = options.limits.clone();
        let app = {
            let _runtime = runtime.enter();
            toolgraph::server::router(engine, options).unwrap()
        };
        // The server's own accept loop (connection cap, header timeout).
        runtime.spawn(async move {
            toolgraph::server::serve_app(listener, app, &limits, std::future::pending()).await
        });
        Self {
            addr,
            runtime: Some(runtime),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// A response: status, headers (lower-cased names), body.
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Resp {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One request over a fresh connection.
pub fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Resp {
        status,
        headers,
        body,
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

pub fn get(addr: SocketAddr, path: &str, key: Option<&str>) -> Resp {
    let auth = key.map(|k| format!("Bearer {k}"));
    let mut h: Vec<(&str, &str)> = Vec::new();
    if let Some(a) = &auth {
        h.push(("Authorization", a));
    }
    call(addr, "GET", path, &h, b"")
}

pub fn post_json(addr: SocketAddr, path: &str, key: Option<&str>, body: &str) -> Resp {
    let auth = key.map(|k| format!("Bearer {k}"));
    let mut h: Vec<(&str, &str)> = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        h.push(("Authorization", a));
    }
    call(addr, "POST", path, &h, body.as_bytes())
}

/// Every error answer has the one shape.
pub fn assert_error_shape(r: &Resp) -> serde_json::Value {
    assert!(r.status >= 400, "{} {}", r.status, r.body);
    let v = r.json();
    let e = &v["error"];
    assert!(
        e["code"].is_string() && e["message"].is_string(),
        "{}",
        r.body
    );
    assert!(
        ["invalid_request", "auth", "system", "internal"]
            .contains(&e["type"].as_str().unwrap_or("")),
        "{}",
        r.body
    );
    assert!(e["request_id"].is_string(), "{}", r.body);
    assert_eq!(r.header("x-request-id"), e["request_id"].as_str());
    v
}
