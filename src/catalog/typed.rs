//! Producers a parameter's kind reveals, beside the entity and name rules of
//! [`super::deps`]: a session or access token comes from a login (the one
//! of the same service: `ebay_review_item.session_id` <- `ebay_user_login`),
//! a year, date or time from the tool that tells the current one, and a
//! value a validator checks from that validator (`email` <-
//! `validate_email`: what it hands on is the checked value).

use super::deps::Found;
use crate::extract::split_identifier;
use crate::model::Tool;
use std::collections::HashMap;

/// Name words of a tool that signs a user in.
const LOGIN_WORDS: &[&str] = &["login", "signin", "logon", "authenticate"];
/// Name words that say nothing about which service a tool belongs to.
const GENERIC: &[&str] = &[
    "get", "set", "view", "user", "account", "login", "to", "the", "a", "of", "for", "by", "my",
    "in", "on", "and", "with", "from", "add", "update", "delete", "create", "list", "search",
    "find", "manage", "check", "track", "select", "book", "cancel", "order", "status",
];
/// Leading name words of a tool that checks a value and hands it on.
const CHECK_WORDS: &[&str] = &["validate", "verify"];
/// What a current-value tool's name says it tells.
const NOW_WORDS: &[&str] = &["current", "today", "now"];

/// The catalog's tools by the kinds of value they produce, indexed once.
#[derive(Debug, Default)]
pub(crate) struct TypedProducers {
    /// Login tools with their service words (`ebay`).
    logins: Vec<(usize, Vec<String>)>,
    /// Tools that tell the current date (and so the year) or time.
    now_date: Vec<usize>,
    now_time: Vec<usize>,
    /// Validators by the noun they check (`email`).
    checks: HashMap<String, Vec<usize>>,
}

impl TypedProducers {
    pub fn of(tools: &[Tool]) -> Self {
        let mut out = Self::default();
        for (j, t) in tools.iter().enumerate() {
            let w = split_identifier(&t.name);
            let has = |any: &[&str]| w.iter().any(|x| any.contains(&x.as_str()));
            let signs_in = has(LOGIN_WORDS)
                || w.windows(2)
                    .any(|p| matches!((p[0].as_str(), p[1].as_str()), ("log" | "sign", "in")));
            if signs_in {
                let service = w
                    .iter()
                    .filter(|x| {
                        !GENERIC.contains(&x.as_str()) && !LOGIN_WORDS.contains(&x.as_str())
                    })
                    .filter(|x| !matches!(x.as_str(), "log" | "sign" | "in"))
                    .cloned()
                    .collect();
                out.logins.push((j, service));
            }
            if has(NOW_WORDS) && !t.params.iter().any(|p| p.required) {
                if has(&["date", "day"]) {
                    out.now_date.push(j);
                }
                if has(&["time"]) {
                    out.now_time.push(j);
                }
            }
            if let [first, noun, ..] = w.as_slice()
                && CHECK_WORDS.contains(&first.as_str())
            {
                out.checks.entry(noun.clone()).or_default().push(j);
            }
        }
        out
    }

    /// The producers of parameter `param` of tool `consumer` its kind
    /// reveals, with a confidence and why.
    pub fn of_param(&self, tools: &[Tool], consumer: usize, param: &str) -> Found {
        let p = split_identifier(param);
        let has = |w: &str| p.iter().any(|x| x == w);
        let last = p.last().map_or("", String::as_str);
        let mut out = Vec::new();
        if has("session") || (last == "token" && (has("auth") || has("access"))) {
            out.extend(self.login_for(tools, consumer));
        }
        let whole = p.len() == 1;
        let dated = matches!(last, "year" | "date");
        if dated || last == "time" {
            let list = if dated {
                &self.now_date
            } else {
                &self.now_time
            };
            let confidence = if whole { 0.8 } else { 0.6 };
            for &j in list.iter().filter(|&&j| j != consumer) {
                out.push((
                    j,
                    spread(confidence, list.len()),
                    "it tells the current one",
                ));
            }
        }
        for noun in &p {
            for &j in self.checks.get(noun).into_iter().flatten() {
                if j != consumer {
                    out.push((j, 0.8, "it checks that value and hands it on"));
                }
            }
        }
        out
    }

    /// The login of the consumer's service: the logins sharing the most
    /// service words with its name; none when no login shares one.
    fn login_for(&self, tools: &[Tool], consumer: usize) -> Found {
        let own = split_identifier(&tools[consumer].name);
        let shared = |service: &[String]| service.iter().filter(|w| own.contains(w)).count();
        let best = self
            .logins
            .iter()
            .filter(|(j, _)| *j != consumer)
            .map(|(_, s)| shared(s))
            .max()
            .unwrap_or(0);
        if best == 0 {
            return Vec::new();
        }
        let chosen: Vec<usize> = self
            .logins
            .iter()
            .filter(|(j, s)| *j != consumer && shared(s) == best)
            .map(|(j, _)| *j)
            .collect();
        let n = chosen.len();
        chosen
            .into_iter()
            .map(|j| (j, spread(0.9, n), "the login of the same service"))
            .collect()
    }
}

/// A confidence shared among `n` equal producers.
fn spread(confidence: f32, n: usize) -> f32 {
    confidence / (1.0 + 0.35 * (n.max(1) as f32).ln())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Param;

    fn tool(name: &str, required: &[&str]) -> Tool {
        Tool {
            name: name.into(),
            params: required.iter().map(|n| Param::required(n)).collect(),
            ..Tool::default()
        }
    }

    #[test]
    fn a_parameter_kind_names_its_producer() {
        let tools = [
            tool("ebay_review_item", &["session_id", "email", "year"]),
            tool("ebay_user_login", &["email", "password"]),
            tool("amazon_user_login", &["email", "password"]),
            tool("get_current_date", &[]),
            tool("get_current_time", &[]),
            tool("validate_email", &["email"]),
            tool("weather_report", &["session_id"]),
        ];
        let typed = TypedProducers::of(&tools);
        let names = |param: &str, consumer: usize| -> Vec<&str> {
            typed
                .of_param(&tools, consumer, param)
                .iter()
                .map(|(j, _, _)| tools[*j].name.as_str())
                .collect()
        };
        // The login of the same service, not another one's.
        assert_eq!(names("session_id", 0), ["ebay_user_login"]);
        // No login shares a word with the consumer: none is guessed.
        assert!(names("session_id", 6).is_empty());
        assert_eq!(names("year", 0), ["get_current_date"]);
        assert_eq!(names("delivery_time", 0), ["get_current_time"]);
        assert_eq!(names("email", 1), ["validate_email"]);
        // A validator is not its own producer.
        assert!(names("email", 5).is_empty());
        let (_, whole, _) = typed.of_param(&tools, 0, "year")[0];
        let (_, part, _) = typed.of_param(&tools, 0, "delivery_time")[0];
        assert!(whole >= 0.7 && part < 0.7, "{whole} {part}");
    }
}
