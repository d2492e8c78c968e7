//! What a message says is not what the tool acts on: in "send an email to
//! bob@example.com about the quarterly budget" the budget is the e-mail's
//! subject, and the budget tools are not what the planner asks for. The
//! payload clause of a messaging request (after "about", "regarding",
//! "saying"… once a messaging word came before it, up to the next clause)
//! is left out of the graph evidence and of what the dense and lexical
//! channels read; the response's mentions and the supplied values keep it.

use crate::extract::words::is_messaging;
use std::borrow::Cow;
use std::ops::Range;

/// Where a message's payload starts (the cue itself is left out with it).
const CUES: &[&str] = &[
    " about ",
    " regarding ",
    " concerning ",
    " saying ",
    " that says ",
    " to say ",
    " telling them ",
    " letting them know ",
];

/// Where it ends: the next clause (a recipient, a channel, another step).
const ENDS: &[&str] = &[
    " to ",
    " via ",
    " on ",
    " using ",
    " through ",
    " in ",
    " and ",
    " then ",
    ",",
    ".",
    "?",
    "!",
    ";",
];

/// The byte range of `text`'s payload clause, cue included: `None` when no
/// messaging word comes before a cue.
pub(crate) fn payload(text: &str) -> Option<Range<usize>> {
    let lower = text.to_ascii_lowercase();
    let (cue_at, cue) = CUES
        .iter()
        .filter_map(|c| lower.find(c).map(|at| (at, *c)))
        .min_by_key(|&(at, _)| at)?;
    let before = &lower[..cue_at];
    let messaging = before
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .any(is_messaging);
    if !messaging {
        return None;
    }
    let body = cue_at + cue.len() - 1;
    let end = ENDS
        .iter()
        .filter_map(|e| lower[body..].find(e).map(|at| body + at))
        .min()
        .unwrap_or(text.len());
    // (ASCII lowering keeps every byte offset.)
    (end > body + 1).then_some(cue_at..end)
}

/// `text` without its payload clause (as it is without one).
pub(crate) fn without_payload(text: &str) -> Cow<'_, str> {
    cut(text, payload(text).as_ref())
}

/// `text` without `said` (its [`payload`]).
pub(crate) fn cut<'t>(text: &'t str, said: Option<&Range<usize>>) -> Cow<'t, str> {
    match said {
        Some(r) => Cow::Owned(format!("{}{}", &text[..r.start], &text[r.end..])),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_messages_subject_is_cut_up_to_the_next_clause() {
        let cut = |t: &str| without_payload(t).into_owned();
        assert_eq!(
            cut("Send an email to bob@example.com about the quarterly budget"),
            "Send an email to bob@example.com"
        );
        assert_eq!(
            cut("Post a message about the outage on Slack"),
            "Post a message on Slack"
        );
        assert_eq!(
            cut("Text Ana saying I'm late, then book a taxi"),
            "Text Ana, then book a taxi"
        );
        assert_eq!(
            cut("Remind me about the dentist appointment tomorrow."),
            "Remind me."
        );
    }

    #[test]
    fn a_request_that_is_not_a_message_keeps_its_subject() {
        for t in [
            "Tell me about the weather in Paris",
            "Find papers about graph neural networks",
            "What do you know about budgets?",
            "Send",
            "Email about",
        ] {
            assert_eq!(without_payload(t), t, "{t}");
        }
    }

    #[test]
    fn unicode_and_odd_input_never_panic() {
        for t in [
            "Send 📧 about ünïcode 🙂",
            "email ABOUT ",
            "Ünïcode email about x to y",
        ] {
            let _ = without_payload(t);
        }
        assert_eq!(payload("send about x"), Some(4..12));
    }
}
