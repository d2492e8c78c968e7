//! The `toolgraph serve` binary as a user runs it: every `curl` in the
//! README against a live server, a kill -9 in the middle of registrations,
//! the real dev catalogs through the command line and through the API, and
//! commands on an empty store.

use crate::common::root;
use crate::http::{call, get};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolgraph"));
    c.current_dir(root()).env_remove("TOOLGRAPH_DATA");
    c
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `toolgraph serve` on a free port; killed when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) addr: SocketAddr,
}

impl Server {
    pub(crate) fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_logged(args, env, None)
    }

    /// [`Server::start`] with its log (stderr) appended to `log`.
    pub(crate) fn start_logged(
        args: &[&str],
        env: &[(&str, &str)],
        log: Option<std::path::PathBuf>,
    ) -> Self {
        let port = free_port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut c = bin();
        c.arg("serve")
            .arg("--addr")
            .arg(addr.to_string())
            .args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        let stderr = match log {
            Some(path) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .unwrap(),
            ),
            None => Stdio::null(),
        };
        let child = c.stdout(Stdio::null()).stderr(stderr).spawn().unwrap();
        let mut s = Server { child, addr };
        s.wait_ready();
        s
    }

    fn wait_ready(&mut self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(180) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("toolgraph serve exited early: {status}");
            }
            if std::net::TcpStream::connect(self.addr).is_ok()
                && get(self.addr, "/readyz", None).status == 200
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("toolgraph serve did not become ready");
    }

    pub(crate) fn kill9(&mut self) {
        let _ = self.child.kill(); // SIGKILL
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

#[test]
fn every_curl_example_in_the_readme_works_as_printed() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    // Commands may continue over lines with a trailing backslash.
    let mut commands = Vec::new();
    let mut current = String::new();
    for line in readme.lines() {
        let l = line.trim();
        if current.is_empty() && !l.starts_with("curl ") {
            continue;
        }
        current.push_str(l.trim_end_matches('\\'));
        current.push(' ');
        if !l.ends_with('\\') {
            commands.push(std::mem::take(&mut current));
        }
    }
    assert!(
        commands.len() >= 8,
        "the README shows {} curl commands",
        commands.len()
    );
    for must in [
        "/v1/search",
        "/v1/resolve",
        "/v1/select",
        "/v1/tools",
        "/v1/reload",
        "/v1/sparql",
        "/metrics",
    ] {
        assert!(
            commands.iter().any(|c| c.contains(must)),
            "no curl example for {must}"
        );
    }
    // README command 1 serves without keys (open, loopback only); the key
    // examples send a header an open server ignores.
    // As scripts/serve.sh starts it: file sources under the repository.
    let here = root().display().to_string();
    let server = Server::start(&["--memory", "--source-root", &here], &[]);
    for cmd in &commands {
        let cmd = cmd.replace("127.0.0.1:7878", &server.addr.to_string());
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{cmd} -o /dev/null -w '%{{http_code}}'"))
            .current_dir(root())
            .env("TOOLGRAPH_KEY", "any-key")
            .output()
            .unwrap();
        let code = String::from_utf8_lossy(&out.stdout);
        assert!(
            code.trim().starts_with('2'),
            "`{cmd}` answered {code} ({})",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn acknowledged_registrations_survive_kill_9() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap().to_string();
    let args = ["--data", d.as_str(), "--no-embed"];
    let mut server = Server::start(&args, &[]);
    let a = server.addr;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = done.clone();
    let writer = std::thread::spawn(move || {
        let mut acknowledged = Vec::new();
        for i in 0..200 {
            let name = format!("kill_probe_{i}");
            let line = format!(
                r#"{{"id": "{name}", "name": "{name}", "description": "Fetch the weather report for city number {i}"}}"#
            );
            let r = std::panic::catch_unwind(|| {
                call(
                    a,
                    "POST",
                    &format!("/v1/tools?source=probe-{i}.jsonl"),
                    &[("Content-Type", "application/x-ndjson")],
                    line.as_bytes(),
                )
            });
            match r {
                Ok(resp) if resp.status == 200 => {
                    acknowledged.push(name);
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                _ => break,
            }
        }
        acknowledged
    });
    // Kill once a few registrations are acknowledged (however slow the
    // machine), while the next one is in flight.
    let start = std::time::Instant::now();
    while done.load(std::sync::atomic::Ordering::SeqCst) < 5 {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "fewer than 5 registrations acknowledged in 300 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    server.kill9();
    let acknowledged = writer.join().unwrap();
    assert!(
        acknowledged.len() >= 3,
        "only {} registrations before the kill",
        acknowledged.len()
    );
    // Restart on the same store: every acknowledged tool is there, the store
    // loads cleanly and passes its constraints.
    let server = Server::start(&args, &[]);
    for name in &acknowledged {
        let r = get(server.addr, &format!("/v1/tools/{name}"), None);
        assert_eq!(
            r.status,
            200,
            "{name} lost after kill -9 ({} acknowledged)",
            acknowledged.len()
        );
    }
    drop(server);
    let out = bin()
        .args(["sparql", "ASK { ?s ?p ?o }", "--data", &d])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "kill -9: {} acknowledged registrations, all present after restart",
        acknowledged.len()
    );
}

#[test]
fn the_real_dev_catalogs_register_through_the_cli_and_the_api() {
    for (catalog, tools) in [("metatool", 199u64), ("sealtools", 4076)] {
        let file = format!("benches/datasets/{catalog}/tools.jsonl");
        let data = tempfile::tempdir().unwrap();
        let out = bin()
            .args(["load", "ontology", &file, "--data"])
            .arg(data.path())
            .arg("--no-embed")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{catalog}: {text}");
        assert!(
            text.contains(&format!("{tools} tools")),
            "{catalog}: {text}"
        );
    }
    let server = Server::start(&["--memory", "--no-embed"], &[]);
    for (catalog, tools) in [("metatool", 199u64), ("sealtools", 4076)] {
        let body =
            std::fs::read(root().join(format!("benches/datasets/{catalog}/tools.jsonl"))).unwrap();
        let r = call(
            server.addr,
            "POST",
            &format!("/v1/tools?source={catalog}.jsonl"),
            &[("Content-Type", "application/x-ndjson")],
            &body,
        );
        assert_eq!(
            r.status,
            200,
            "{catalog}: {}",
            &r.body[..r.body.len().min(2000)]
        );
        let v = r.json();
        assert_eq!(v["tools"].as_u64(), Some(tools), "{catalog}");
        if catalog == "metatool" {
            assert!(
                v["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w.as_str().unwrap().contains("minted verb:")),
                "{v}"
            );
        }
    }
}

#[test]
fn commands_that_need_a_catalog_say_so_on_an_empty_store() {
    let data = tempfile::tempdir().unwrap();
    for args in [
        vec!["extract", "MAKE_RESERVATION"],
        vec!["search", "book a table", "--no-embed"],
        vec!["tools"],
    ] {
        let out = bin()
            .args(&args)
            .arg("--data")
            .arg(data.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{args:?} succeeded on an empty store"
        );
        assert!(err.contains("is empty"), "{args:?}: {err}");
        assert!(
            err.contains(&data.path().display().to_string()),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("toolgraph load ontology seeds"),
            "{args:?}: {err}"
        );
    }
}
