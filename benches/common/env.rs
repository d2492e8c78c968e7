//! A bench setting from the environment, else its default.

/// `key` parsed as `T`, or `default` when unset or unparsable.
pub fn env<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
