//! E-mail addresses, URLs, phone numbers and quoted strings.

use super::*;

// ---- email, url, phone, quoted -------------------------------------------------

pub(super) fn email(i: &str) -> Res<'_, (MentionKind, String)> {
    let local_len = i
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || "._%+-".contains(*c))
        .count();
    let fail = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
    if local_len == 0 || i.as_bytes().get(local_len) != Some(&b'@') {
        return Err(fail());
    }
    let dom_start = local_len + 1;
    let dom = i.get(dom_start..).unwrap_or("");
    let mut dom_len = dom
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .count();
    while dom_len > 0
        && dom
            .as_bytes()
            .get(dom_len - 1)
            .is_some_and(|b| *b == b'.' || *b == b'-')
    {
        dom_len -= 1;
    }
    let d = dom.get(..dom_len).unwrap_or("");
    let tld_ok = d
        .rsplit('.')
        .next()
        .is_some_and(|t| t.len() >= 2 && t.chars().all(|c| c.is_ascii_alphabetic()));
    if !d.contains('.') || !tld_ok || d.starts_with('.') || d.contains("..") {
        return Err(fail());
    }
    let end = dom_start + dom_len;
    let s = i.get(..end).unwrap_or("");
    Ok((
        i.get(end..).unwrap_or(""),
        (MentionKind::Email, s.to_lowercase()),
    ))
}

pub(super) fn url(i: &str) -> Res<'_, (MentionKind, String)> {
    let (after, _) = alt((
        tag_no_case("https://"),
        tag_no_case("http://"),
        tag_no_case("www."),
    ))
    .parse(i)?;
    let body_len: usize = after
        .chars()
        .take_while(|c| !c.is_whitespace() && !"<>\"'`".contains(*c))
        .map(char::len_utf8)
        .sum();
    let mut end = i.len() - after.len() + body_len;
    while let Some(c) = i.get(..end).and_then(|s| s.chars().last()) {
        if ".,;:!?)]}".contains(c) {
            end -= c.len_utf8();
        } else {
            break;
        }
    }
    if end <= i.len() - after.len() {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    let s = i.get(..end).unwrap_or("");
    Ok((
        i.get(end..).unwrap_or(""),
        (MentionKind::Url, s.to_string()),
    ))
}

pub(super) fn phone(i: &str) -> Res<'_, (MentionKind, String)> {
    let sep = |i| alt((tag(" "), tag("-"), tag("."))).parse(i);
    let intl = recognize((
        char('+'),
        digits_n(1, 3),
        many0(preceded(
            opt(alt((sep, tag(" ("), tag("(")))),
            terminated(digits_n(1, 5), opt(char(')'))),
        )),
    ));
    let paren = recognize((
        char('('),
        digits_n(3, 3),
        char(')'),
        space0,
        digits_n(3, 3),
        sep,
        digits_n(4, 4),
    ));
    let plain = recognize((digits_n(3, 3), sep, digits_n(3, 3), sep, digits_n(4, 4)));
    let (rest, s) = verify(alt((intl, paren, plain)), |s: &str| {
        let n = s.chars().filter(char::is_ascii_digit).count();
        (7..=15).contains(&n)
    })
    .parse(i)?;
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let v = if s.starts_with('+') {
        format!("+{digits}")
    } else {
        digits
    };
    Ok((rest, (MentionKind::Phone, v)))
}

pub(super) fn quoted(i: &str) -> Res<'_, (MentionKind, String)> {
    let fail = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
    let mut cs = i.chars();
    let open = cs.next().ok_or_else(fail)?;
    let close: &[char] = match open {
        '"' => &['"'],
        '\'' => &['\''],
        '“' => &['”', '"'],
        '‘' => &['’', '\''],
        '«' => &['»'],
        _ => return Err(fail()),
    };
    let body = i.get(open.len_utf8()..).ok_or_else(fail)?;
    for (k, c) in body.char_indices() {
        if k > 300 || c == '\n' {
            break;
        }
        if close.contains(&c) {
            let after = body.get(k + c.len_utf8()..).unwrap_or("");
            if after.chars().next().is_some_and(char::is_alphanumeric) {
                continue;
            }
            let inner = body.get(..k).unwrap_or("");
            let trimmed = inner.trim();
            if trimmed.is_empty() || trimmed.len() != inner.len() {
                return Err(fail());
            }
            return Ok((after, (MentionKind::Quoted, inner.to_string())));
        }
    }
    Err(fail())
}
