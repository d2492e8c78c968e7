//! What the airlock may reach: network addresses and files.
//!
//! Every URL the airlock fetches (a source, an MCP server, a health check,
//! an API directory and the specs it lists) is an operator's or an
//! upstream's word, and the server fetching it sits inside the operator's
//! network: pointed at `169.254.169.254` it read the cloud's metadata,
//! pointed at itself it listed its own API as 32 pending tools. So:
//! - a URL is http or https, without `user:password@`, and its host is a
//!   name or a plain address (`0x7f000001`, `2130706433`, `0177.0.0.1` and
//!   `127.1` are addresses in disguise and are refused);
//! - the host is resolved once, every address it resolves to must be public
//!   (not loopback, private, link-local, shared, multicast, reserved, nor an
//!   IPv4 address inside IPv6), and the connection goes to those very
//!   addresses ([`PinnedResolver`]): a name cannot resolve to a public address when
//!   checked and to a private one when connected;
//! - an operator allows private hosts one by one (`--airlock-allow`: a host
//!   name, an address, or a network such as `10.1.0.0/16`).
//!
//! A file or folder source must lie under the operator's source root
//! (`--source-root`); without one there are no file sources. Paths are
//! resolved (`..` and symbolic links followed) before they are compared, so
//! neither `../` nor a link leads out; `/proc/self/environ` and the keys
//! file are outside any sensible root.

use crate::error::{Error, Field, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The operator's allowances.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// Hosts, addresses or networks (`10.1.0.0/16`) the airlock may reach
    /// although they are not public.
    pub allow: Vec<String>,
    /// File and folder sources must be under this folder (none: no file
    /// sources).
    pub source_root: Option<PathBuf>,
}

/// Why an address is not public, if it is not.
pub fn private_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return Some(private_v4(v4).unwrap_or("an IPv4 address inside IPv6"));
            }
            let s = v6.segments();
            if v6.is_unspecified() {
                Some("unspecified")
            } else if v6.is_loopback() {
                Some("loopback")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Some("private (unique local)")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if s[0] & 0xff00 == 0xff00 {
                Some("multicast")
            } else if s[0] == 0x2001 && s[1] == 0x0db8 {
                Some("documentation")
            } else {
                None
            }
        }
    }
}

fn private_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, ..) => "unspecified",
        (127, ..) => "loopback",
        (10, ..) | (192, 168, _) => "private",
        (172, b, _) if (16..32).contains(&b) => "private",
        (169, 254, _) => "link-local (cloud metadata lives here)",
        (100, b, _) if (64..128).contains(&b) => "shared (carrier-grade NAT)",
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "reserved",
        (198, 18 | 19, _) => "reserved (benchmarking)",
        (224..=239, ..) => "multicast",
        (240..=255, ..) => "reserved",
        _ => return None,
    })
}

/// The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let tail = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..5] == [0; 5]
        && (s[5] == 0xffff || (s[5] == 0 && !v6.is_loopback() && !v6.is_unspecified()))
    {
        return Some(tail());
    }
    if s[0] == 0x64 && s[1] == 0xff9b {
        return Some(tail());
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

/// One label of a host in a numeric form a resolver accepts (decimal,
/// `0x` hex, octal with a leading zero).
fn numeric_label(label: &str) -> bool {
    let l = label.to_ascii_lowercase();
    if let Some(hex) = l.strip_prefix("0x") {
        return hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit())
}

/// A network written as `address/bits`, or one address.
fn in_network(ip: IpAddr, net: &str) -> bool {
    let (addr, bits) = match net.split_once('/') {
        Some((a, b)) => (a, b.parse::<u32>().ok()),
        None => (net, None),
    };
    let Ok(base) = addr.trim_matches(['[', ']']).parse::<IpAddr>() else {
        return false;
    };
    match (ip, base) {
        (IpAddr::V4(i), IpAddr::V4(b)) => {
            let bits = bits.unwrap_or(32).min(32);
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(i) & mask == u32::from(b) & mask
        }
        (IpAddr::V6(i), IpAddr::V6(b)) => {
            let bits = bits.unwrap_or(128).min(128);
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(i) & mask == u128::from(b) & mask
        }
        _ => false,
    }
}

/// Private allowances one source may add at most.
pub const MAX_SOURCE_ALLOW: usize = 32;

impl Reach {
    /// This reach with `extra` hosts, addresses or networks allowed too
    /// (one source's own allowances).
    pub fn with(&self, extra: &[String]) -> Reach {
        let mut r = self.clone();
        for e in extra {
            if !r.allow.contains(e) {
                r.allow.push(e.clone());
            }
        }
        r
    }

    /// Checks one source's allowances: at most [`MAX_SOURCE_ALLOW`], each a
    /// host name, an address or `address/bits`, without spaces.
    pub fn check_allowances(extra: &[String], field: Field) -> Result<()> {
        if extra.len() > MAX_SOURCE_ALLOW {
            return Err(Error::invalid_field(
                field,
                format!("at most {MAX_SOURCE_ALLOW} allowances"),
            ));
        }
        for (i, e) in extra.iter().enumerate() {
            let ok = !e.is_empty()
                && e.len() <= 255
                && e.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._:/[]".contains(&b));
            if !ok {
                return Err(Error::invalid_at(
                    field,
                    format!("allow[{i}]"),
                    "an allowance is a host name, an address or a network (10.1.0.0/16)",
                ));
            }
        }
        Ok(())
    }

    /// Allows `hosts` (tests and embedders reaching servers on loopback).
    pub fn allowing<S: Into<String>>(hosts: impl IntoIterator<Item = S>) -> Self {
        Self {
            allow: hosts.into_iter().map(Into::into).collect(),
            source_root: None,
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim_matches(['[', ']']).trim_end_matches('.');
        self.allow
            .iter()
            .any(|a| a.trim_end_matches('.').eq_ignore_ascii_case(host))
    }

    /// `Err(why)` when `ip` (what `host` resolved to) may not be reached.
    pub fn check_addr(&self, host: &str, ip: IpAddr) -> std::result::Result<(), String> {
        match private_kind(ip) {
            None => Ok(()),
            Some(_) if self.host_allowed(host) || self.allow.iter().any(|n| in_network(ip, n)) => {
                Ok(())
            }
            Some(kind) => Err(format!(
                "`{host}` is {ip}, a {kind} address: refused (an operator allows it with --airlock-allow {host})"
            )),
        }
    }

    /// Checks a URL before anything is fetched: scheme, no credentials, a
    /// plain host, and a literal address that may be reached.
    pub fn check_url(&self, url: &str, field: Field) -> Result<()> {
        let bad = |m: String| Error::invalid_field(field, m);
        let uri: ureq::http::Uri = url
            .parse()
            .map_err(|e| bad(format!("`{url}` is not a URL: {e}")))?;
        match uri.scheme_str() {
            Some("http" | "https") => {}
            _ => {
                return Err(bad(format!(
                    "`{url}`: only http and https URLs are fetched"
                )));
            }
        }
        let authority = uri
            .authority()
            .ok_or_else(|| bad(format!("`{url}` names no host")))?;
        if authority.as_str().contains('@') {
            return Err(bad(format!(
                "`{url}` carries credentials (user@host): refused; a source's URL is logged and shown"
            )));
        }
        let host = authority.host();
        let bare = host.trim_matches(['[', ']']);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return self.check_addr(bare, ip).map_err(bad);
        }
        let labels: Vec<&str> = bare.trim_end_matches('.').split('.').collect();
        if labels.iter().all(|l| numeric_label(l)) {
            return Err(bad(format!(
                "`{host}` is an address written in an unusual form: write it as a plain address"
            )));
        }
        Ok(())
    }

    /// The file or folder `location` names, resolved, if it lies under the
    /// source root.
    pub fn file(&self, location: &str, field: Field) -> Result<PathBuf> {
        let Some(root) = &self.source_root else {
            return Err(Error::invalid_field(
                field,
                format!(
                    "`{location}`: file and folder sources need a source root (serve with --source-root DIR)"
                ),
            ));
        };
        let root = root.canonicalize().map_err(|e| Error::io(root, e))?;
        let path = Path::new(location);
        let path = if path.is_relative() {
            root.join(path)
        } else {
            path.to_path_buf()
        };
        // Gone or unreadable: the source is unavailable (a scan), which
        // `check_location` turns into a bad location when it is added.
        let real = path
            .canonicalize()
            .map_err(|e| Error::unavailable(location.to_string(), e))?;
        if !real.starts_with(&root) {
            return Err(Error::invalid_field(
                field,
                format!("`{location}` is outside the source root {}", root.display()),
            ));
        }
        Ok(real)
    }

    /// Whether a file found inside a folder source still lies under the
    /// root once resolved (a symbolic link may lead out).
    pub(crate) fn inside(&self, path: &Path) -> bool {
        let (Some(root), Ok(real)) = (&self.source_root, path.canonicalize()) else {
            return false;
        };
        root.canonicalize().is_ok_and(|root| real.starts_with(root))
    }
}

/// A resolver that checks every address a host resolves to and hands the
/// connection exactly those: resolve, check, then connect to what was
/// checked.
#[derive(Debug)]
pub(crate) struct PinnedResolver {
    pub reach: Arc<Reach>,
}

impl ureq::unversioned::resolver::Resolver for PinnedResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> std::result::Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let addrs = ureq::unversioned::resolver::DefaultResolver::default()
            .resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or("");
        let checked: Vec<SocketAddr> = addrs.iter().copied().collect();
        for a in &checked {
            self.reach
                .check_addr(host.trim_matches(['[', ']']), a.ip())
                .map_err(ureq::Error::BadUri)?;
        }
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_named_and_public_ones_pass() {
        for (ip, kind) in [
            ("127.0.0.1", "loopback"),
            ("10.2.3.4", "private"),
            ("172.20.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("100.64.0.1", "shared"),
            ("0.0.0.0", "unspecified"),
            ("::1", "loopback"),
            ("fe80::1", "link-local"),
            ("fd00::1", "private"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("2002:7f00:1::", "loopback"),
        ] {
            let got = private_kind(ip.parse().unwrap());
            assert!(got.is_some_and(|k| k.contains(kind)), "{ip}: {got:?}");
        }
        for ip in ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "172.32.0.1"] {
            assert_eq!(private_kind(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[test]
    fn urls_are_plain_http_to_reachable_hosts() {
        let none = Reach::default();
        let f = Field::SourceLocation;
        assert!(
            none.check_url("https://api.example.com/openapi.json", f)
                .is_ok()
        );
        for bad in [
            "http://169.254.169.254/latest/meta-data/",
            "http://127.0.0.1:7070/v1/tools",
            "http://[::1]/x",
            "http://0x7f000001/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://user:pass@api.example.com/",
            "file:///etc/passwd",
            "gopher://x/",
            "http:///nohost",
        ] {
            assert!(none.check_url(bad, f).is_err(), "{bad}");
        }
        let local = Reach::allowing(["127.0.0.1"]);
        assert!(local.check_url("http://127.0.0.1:9000/x", f).is_ok());
        assert!(local.check_url("http://10.0.0.1/x", f).is_err());
        let net = Reach::allowing(["10.1.0.0/16"]);
        assert!(net.check_addr("svc", "10.1.2.3".parse().unwrap()).is_ok());
        assert!(net.check_addr("svc", "10.2.0.1".parse().unwrap()).is_err());
        let named = Reach::allowing(["tools.internal"]);
        assert!(
            named
                .check_addr("tools.internal", "10.9.9.9".parse().unwrap())
                .is_ok()
        );
    }

    #[test]
    fn files_stay_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("m")).unwrap();
        std::fs::write(root.join("m/a.json"), "{}").unwrap();
        std::fs::write(dir.path().join("secret.json"), "{}").unwrap();
        let reach = Reach {
            source_root: Some(root.clone()),
            ..Reach::default()
        };
        let f = Field::SourceLocation;
        assert!(
            reach
                .file(root.join("m/a.json").to_str().unwrap(), f)
                .is_ok()
        );
        assert!(reach.file("m/a.json", f).is_ok());
        assert!(reach.file("m/../../secret.json", f).is_err());
        assert!(
            reach
                .file(dir.path().join("secret.json").to_str().unwrap(), f)
                .is_err()
        );
        assert!(reach.file("/proc/self/environ", f).is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.json"), root.join("m/link.json"))
                .unwrap();
            assert!(reach.file("m/link.json", f).is_err());
            assert!(!reach.inside(&root.join("m/link.json")));
            assert!(reach.inside(&root.join("m/a.json")));
        }
        assert!(Reach::default().file("m/a.json", f).is_err());
    }
}
