//! What a request already gives a tool: the value of a parameter, from the
//! extractor's values (e-mails, phones, links, dates, times, amounts,
//! places, quoted strings) and identifier-like words ("order 8812",
//! "ID 'ZF4TAYThJ'"). A prerequisite that would produce that parameter is
//! not needed (see [`super::prerequisites`]).

use crate::extract::split_identifier;
use crate::model::{Mention, MentionKind, Tool};

/// A request's values, as the prerequisite walk asks about them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Supplied<'q> {
    text: &'q str,
    mentions: &'q [Mention],
}

/// What a parameter takes, from its name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Wants {
    Kinds(&'static [MentionKind]),
    /// An id, number or code: a word with a digit, or something quoted.
    Identifier,
    /// A four-digit year.
    Year,
}

/// What a parameter named by `words` takes (`None`: nothing a request's
/// value says for sure, such as `name` or `language`).
fn wants(words: &[String]) -> Option<Wants> {
    let has = |any: &[&str]| words.iter().any(|w| any.contains(&w.as_str()));
    let last = words.last().map_or("", String::as_str);
    Some(if has(&["email", "mail", "e-mail"]) {
        Wants::Kinds(&[MentionKind::Email])
    } else if has(&["phone", "mobile", "telephone"]) {
        Wants::Kinds(&[MentionKind::Phone])
    } else if has(&["url", "uri", "link", "website", "webpage"]) {
        Wants::Kinds(&[MentionKind::Url])
    } else if has(&["date", "day", "deadline", "birthday", "birthdate"]) {
        Wants::Kinds(&[MentionKind::Date])
    } else if last == "time" {
        Wants::Kinds(&[MentionKind::Time])
    } else if has(&["year"]) {
        Wants::Year
    } else if has(&[
        "amount", "price", "cost", "budget", "salary", "rent", "fee", "payment", "total",
    ]) {
        Wants::Kinds(&[MentionKind::Money])
    } else if has(&[
        "location",
        "address",
        "city",
        "place",
        "destination",
        "origin",
        "venue",
    ]) {
        Wants::Kinds(&[MentionKind::ProperNoun])
    } else if matches!(
        last,
        "id" | "ids" | "identifier" | "number" | "code" | "key" | "token" | "uuid"
    ) {
        Wants::Identifier
    } else {
        return None;
    })
}

impl<'q> Supplied<'q> {
    /// The request `text` and its mentions.
    pub fn new(text: &'q str, mentions: &'q [Mention]) -> Self {
        Self { text, mentions }
    }

    /// What the request gives for `parameter` of `tool` (several, comma
    /// separated, must all be given), or `None`.
    pub fn value_for(&self, tool: &Tool, parameter: &str) -> Option<String> {
        let mut values = Vec::new();
        for name in parameter
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            // A parameter the tool does not have is nothing the request gives.
            tool.params.iter().find(|p| p.name == name)?;
            let words = split_identifier(name);
            values.push(self.value(wants(&words)?, &words)?);
        }
        (!values.is_empty()).then(|| values.join(", "))
    }

    fn value(&self, wants: Wants, name_words: &[String]) -> Option<String> {
        match wants {
            Wants::Kinds(kinds) => self
                .mentions
                .iter()
                .find(|m| kinds.contains(&m.kind))
                .map(|m| m.surface.clone()),
            Wants::Year => words(self.text)
                .find(|w| w.len() == 4 && w.starts_with(['1', '2']) && is_digits(w))
                .map(str::to_string),
            Wants::Identifier => self.identifier(name_words),
        }
    }
}

impl Supplied<'_> {
    /// An identifier the request gives for a parameter named `name_words`
    /// (`order_id`: order, id): a word with a digit, or a quoted one, right
    /// after the parameter's own noun or "id" ("order 88A12", "ID
    /// 'ZF4TAYThJ'"). A flight number is no session id.
    fn identifier(&self, name_words: &[String]) -> Option<String> {
        const GENERIC: &[&str] = &[
            "id",
            "ids",
            "identifier",
            "number",
            "code",
            "key",
            "token",
            "uuid",
        ];
        let cue = |w: &str| {
            let w = w.to_lowercase();
            w == "id" || (!GENERIC.contains(&w.as_str()) && name_words.contains(&w))
        };
        let words: Vec<&str> = words(self.text).collect();
        (0..words.len()).find_map(|i| {
            let w = words[i];
            let looks = w.len() >= 3 && w.chars().any(|c| c.is_ascii_digit()) || self.quoted(w);
            let cued = words[i.saturating_sub(3)..i].iter().any(|p| cue(p));
            (looks && cued).then(|| w.to_string())
        })
    }

    /// Whether `word` is (inside) a quoted mention.
    fn quoted(&self, word: &str) -> bool {
        self.mentions
            .iter()
            .any(|m| m.kind == MentionKind::Quoted && m.surface.contains(word))
    }
}

fn is_digits(w: &str) -> bool {
    w.chars().all(|c| c.is_ascii_digit())
}

/// The request's words: letters, digits, `-` and `_`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Param;

    fn tool(params: &[&str]) -> Tool {
        Tool {
            name: "t".into(),
            params: params.iter().map(|n| Param::required(n)).collect(),
            ..Tool::default()
        }
    }

    fn mention(text: &str, surface: &str, kind: MentionKind) -> Mention {
        let start = text.find(surface).unwrap();
        Mention {
            start,
            end: start + surface.len(),
            kind,
            surface: surface.into(),
            value: surface.into(),
            iris: Vec::new(),
        }
    }

    #[test]
    fn a_request_gives_the_parameters_its_values_fill() {
        let text = "Email it to jane@example.com, order 88A12, for 2024 on flight 175";
        let ms = [mention(text, "jane@example.com", MentionKind::Email)];
        let s = Supplied::new(text, &ms);
        let t = tool(&[
            "email_address",
            "order_id",
            "year",
            "location",
            "language",
            "session_id",
        ]);
        assert_eq!(
            s.value_for(&t, "email_address").as_deref(),
            Some("jane@example.com")
        );
        assert_eq!(s.value_for(&t, "order_id").as_deref(), Some("88A12"));
        // A flight number is no session id.
        assert_eq!(s.value_for(&t, "session_id"), None);
        assert_eq!(s.value_for(&t, "year").as_deref(), Some("2024"));
        // No place in the request; a language nothing says for sure.
        assert_eq!(s.value_for(&t, "location"), None);
        assert_eq!(s.value_for(&t, "language"), None);
        // Both of two, or nothing; a parameter the tool lacks is not given.
        assert_eq!(s.value_for(&t, "email_address,location"), None);
        assert_eq!(s.value_for(&t, "session_token"), None);
    }

    #[test]
    fn my_location_is_not_a_place() {
        let text = "Can you send my current location to my friend?";
        let s = Supplied::new(text, &[]);
        assert_eq!(s.value_for(&tool(&["location"]), "location"), None);
    }
}
