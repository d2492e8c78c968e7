//! Constellation builder: links a tool descriptor to ontology verbs,
//! entities and domains, using the extractor on its name, description and
//! parameters.
//!
//! Weights (all links are [`Provenance::Extracted`]):
//! - verb: the first verb in the NAME (1.0 × match weight), else the first
//!   verb of the description (0.8 ×), else a common English verb that starts
//!   the name (0.5) or the description (0.4; also any word that starts both
//!   the name and the description), minted as `verb:<lemma>` and listed in
//!   [`Constellation::new_verbs`]. The first word of a multi-word name is
//!   the verb slot unless it is an entity or brand: it never becomes a term;
//! - entities: name terms 1.0 × (0.6 inside a domain prefix), brand classes
//!   0.9, open-vocabulary name nouns 0.8 (compounds 0.9); the description's
//!   first entity after its verb 0.8, other description entities 0.7,
//!   description values 0.5, the description's object noun as an open term
//!   0.5 (only when nothing else was found); parameter names 0.4, parameter
//!   descriptions 0.3;
//! - domains: tags 1.0 (`a/b` gives `a` 1.0 and `b` 0.8), name prefix
//!   (`Movies_1_`, `math.`, `github__`) 0.9, brands 0.7 (name) / 0.5 (description).
//!
//! Links are deduplicated by IRI keeping the maximum weight and sorted by
//! weight (stable: first seen first), so the output is deterministic.

use crate::extract::{Extractor, lemma, tokens, words};
use crate::model::{
    Constellation, Link, Mention, MentionKind, NewTerm, Provenance, ToolDescriptor,
};
use crate::vocab::{self, local_name, tool_iri};

/// Links deduplicated by IRI (max weight), in first-seen order.
#[derive(Default)]
struct Links(Vec<Link>);

impl Links {
    fn add(&mut self, iri: &str, label: &str, weight: f32) {
        if iri.is_empty() || weight.is_nan() || weight <= 0.0 {
            return;
        }
        let weight = weight.min(1.0);
        if let Some(l) = self.0.iter_mut().find(|l| l.iri == iri) {
            l.weight = l.weight.max(weight);
        } else {
            self.0.push(Link {
                iri: iri.to_string(),
                label: label.to_string(),
                provenance: Provenance::Extracted,
                weight,
            });
        }
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn done(mut self) -> Vec<Link> {
        self.0.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        self.0
    }
}

fn label_of(x: &Extractor, iri: &str) -> String {
    x.lexicon()
        .labels(iri)
        .first()
        .map(|s| s.to_string())
        .unwrap_or_else(|| local_name(iri).to_string())
}

/// Byte length of a domain prefix in a tool name (`Movies_1_`, `math.`,
/// `github__`), with the prefix word.
fn name_prefix(name: &str) -> Option<(usize, &str)> {
    if let Some((head, _)) = name.split_once("__")
        && !head.is_empty()
        && head.chars().all(|c| c.is_alphanumeric() || c == '-')
    {
        return Some((head.len() + 2, head));
    }
    if let Some((head, rest)) = name.split_once('.')
        && !head.is_empty()
        && !rest.is_empty()
        && head.chars().all(char::is_alphabetic)
    {
        return Some((head.len() + 1, head));
    }
    let mut parts = name.splitn(3, '_');
    if let (Some(a), Some(b), Some(_)) = (parts.next(), parts.next(), parts.next())
        && !a.is_empty()
        && a.chars().all(char::is_alphabetic)
        && !b.is_empty()
        && b.chars().all(|c| c.is_ascii_digit())
    {
        return Some((a.len() + b.len() + 2, a));
    }
    None
}

fn is_term_kind(k: MentionKind) -> bool {
    matches!(
        k,
        MentionKind::Verb | MentionKind::Entity | MentionKind::Brand
    )
}

/// Build the constellation of one tool.
pub fn build(desc: &ToolDescriptor, x: &Extractor) -> Constellation {
    let lex = x.lexicon();
    let mut verbs = Links::default();
    let mut entities = Links::default();
    let mut domains = Links::default();
    let mut new_terms: Vec<NewTerm> = Vec::new();
    let mut new_verbs: Vec<NewTerm> = Vec::new();
    let mut verb_lemma: Option<String> = None;

    // ---- domains from tags and the name prefix
    for tag in &desc.tags {
        for (k, seg) in tag.split('/').enumerate() {
            if let Some(iri) = vocab::mint(vocab::DOMAIN, seg) {
                let w = if k == 0 { 1.0 } else { 0.8 };
                domains.add(&iri, seg.trim(), w);
            }
        }
    }
    let prefix = name_prefix(&desc.name);
    let prefix_end = prefix.map_or(0, |(n, _)| n);
    if let Some((_, word)) = prefix
        && let Some(iri) = vocab::mint(vocab::DOMAIN, word)
    {
        domains.add(&iri, word, 0.9);
    }

    // ---- the name
    let name = desc.name.as_str();
    let name_ms = x.extract(name);
    if let Some(m) = name_ms
        .iter()
        .find(|m| m.kind == MentionKind::Verb && m.start >= prefix_end)
    {
        for r in &m.iris {
            verbs.add(&r.iri, &label_of(x, &r.iri), r.weight);
        }
        verb_lemma = Some(m.value.clone());
    }
    for m in &name_ms {
        let pw = if m.end <= prefix_end { 0.6 } else { 1.0 };
        add_mention_entities(x, m, pw, 0.7, &mut entities, &mut domains);
    }
    // open vocabulary from the name
    let toks = tokens::tokenize(name, &|w| lex.is_whole_word(w), &|l| {
        lex.is_verb_lemma(l) || words::is_common_verb(l)
    });
    let covered = |t: &tokens::Token<'_>| {
        name_ms
            .iter()
            .any(|m| m.kind != MentionKind::ProperNoun && m.start <= t.start && t.end <= m.end)
    };
    let body: Vec<&tokens::Token<'_>> = toks.iter().filter(|t| t.start >= prefix_end).collect();
    // the verb slot: the first body token when it is a verb
    // (also any non-entity first word of a multi-word name: `acquireCustomers`)
    let verb_slot = body.first().is_some_and(|t| {
        let in_kind = |k: MentionKind| {
            name_ms
                .iter()
                .any(|m| m.kind == k && m.start <= t.start && t.end <= m.end)
        };
        lex.is_verb_lemma(&t.lemma)
            || words::is_common_verb(&t.lemma)
            || in_kind(MentionKind::Verb)
            || (body.len() >= 2 && !in_kind(MentionKind::Entity) && !in_kind(MentionKind::Brand))
    });
    if verbs.is_empty()
        && let Some(t) = body.first()
        && verb_slot
        && words::is_common_verb(&t.lemma)
    {
        mint_verb(&t.lemma, 0.5, &mut verbs, &mut new_verbs);
        verb_lemma = Some(t.lemma.clone());
    }
    let mut run: Vec<&tokens::Token<'_>> = Vec::new();
    let mut runs: Vec<Vec<&tokens::Token<'_>>> = Vec::new();
    for (k, t) in body.iter().enumerate() {
        let skip = (k == 0 && verb_slot)
            || words::is_stop(&t.lower)
            || t.lower.chars().any(|c| c.is_ascii_digit())
            || t.lower.chars().count() < 2;
        if skip {
            if !run.is_empty() {
                runs.push(std::mem::take(&mut run));
            }
            continue;
        }
        run.push(t);
    }
    if !run.is_empty() {
        runs.push(run);
    }
    for run in &runs {
        for t in run {
            if !covered(t) {
                mint_term(&[t], Vec::new(), 0.8, &mut entities, &mut new_terms);
            }
        }
        // compound: unmatched modifiers + an ontology entity head
        if let Some((head, mods)) = run.split_last()
            && !mods.is_empty()
            && mods.iter().all(|t| !covered(t))
        {
            let heads: Vec<String> = name_ms
                .iter()
                .filter(|m| {
                    m.kind == MentionKind::Entity && m.start == head.start && m.end == head.end
                })
                .flat_map(|m| m.iris.iter().map(|r| r.iri.clone()))
                .collect();
            if !heads.is_empty() {
                let all: Vec<&tokens::Token<'_>> = run.to_vec();
                mint_term(&all, heads, 0.9, &mut entities, &mut new_terms);
            }
        }
    }

    // ---- the description (and title)
    let mut text = desc.description.clone();
    if let Some(t) = &desc.title {
        text = format!("{t}. {text}");
    }
    let desc_ms = x.extract(&text);
    let first_verb = desc_ms.iter().position(|m| m.kind == MentionKind::Verb);
    if verbs.is_empty() {
        if let Some(m) = first_verb.and_then(|i| desc_ms.get(i)) {
            for r in &m.iris {
                verbs.add(&r.iri, &label_of(x, &r.iri), 0.8 * r.weight);
            }
            verb_lemma = Some(m.value.clone());
        } else if let Some(w) = text.split_whitespace().next() {
            let l = lemma(w.trim_matches(|c: char| !c.is_alphanumeric()));
            // a common verb, or the word the name starts with (`acquireCustomers`
            // / "Acquire new customers"): both are verbs with little doubt
            let name_first = verb_slot && body.first().is_some_and(|t| t.lemma == l);
            if !words::is_stop(&l) && (words::is_common_verb(&l) || name_first) {
                mint_verb(&l, 0.4, &mut verbs, &mut new_verbs);
                verb_lemma = Some(l);
            }
        }
    }
    let mut warnings = Vec::new();
    if verbs.is_empty() {
        // Last resort (imported tools must have a verb): an open-vocabulary
        // verb from the description: its first word when it reads as one
        // ("Provides …", "Talk to …"; not an acronym such as "API"), else the
        // word after an early "to" ("API to monetize …"), else the name's
        // verb slot (`grabObject`).
        let words: Vec<&str> = desc
            .description
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .collect();
        // never a function word ("The AI has to …" must not mint verb:the)
        let wordlike = |w: &&str| {
            w.chars().count() >= 3
                && w.chars().all(char::is_alphabetic)
                && !words::is_stop(&w.to_lowercase())
        };
        let first = words.first().copied().filter(wordlike);
        let acronym = |w: &str| w.chars().filter(|c| c.is_uppercase()).count() > 1;
        let inflected = first.filter(|w| w.ends_with('s') && lemma(w) != w.to_lowercase());
        let opening = first.filter(|w| !acronym(w));
        let after_to = words
            .iter()
            .take(6)
            .position(|w| w.eq_ignore_ascii_case("to"))
            .and_then(|i| words.get(i + 1).copied())
            .filter(wordlike);
        let slot = body
            .first()
            .filter(|_| verb_slot)
            .map(|t| t.lemma.clone())
            .filter(|l| {
                l.chars().count() >= 3 && l.chars().all(char::is_alphabetic) && !words::is_stop(l)
            });
        // An agent noun says what the tool does: "Ad Generator" generates,
        // `AppBuilder` builds, "Ad Assistant" assists.
        let agent_noun = |w: &str| -> Option<String> {
            let lower = w.to_lowercase();
            let stem = lower
                .strip_suffix("er")
                .or_else(|| lower.strip_suffix("or"))
                .or_else(|| lower.strip_suffix("ant"))?;
            (lower.chars().count() >= 6 && lower.chars().all(char::is_alphabetic))
                .then(|| lemma(&format!("{stem}ing")))
        };
        let doer = words
            .iter()
            .filter_map(|w| agent_noun(w))
            .next()
            .map(|l| (l, "description"))
            .or_else(|| {
                crate::lexical::tokenize(&desc.name)
                    .iter()
                    .rev()
                    .filter_map(|t| agent_noun(t))
                    .next()
                    .map(|l| (l, "name"))
            });
        let choice = inflected
            .or(opening)
            .or(after_to)
            .map(|w| (lemma(w), "description"))
            .or_else(|| slot.map(|l| (l, "name")))
            .or(doer);
        if let Some((l, from)) = choice {
            mint_verb(&l, 0.3, &mut verbs, &mut new_verbs);
            warnings.push(format!(
                "tool `{}`: no verb the ontology knows; minted verb:{l} from its {from}",
                desc.name
            ));
            verb_lemma = Some(l);
        }
    }
    let object = desc_ms
        .iter()
        .enumerate()
        .find(|(i, m)| first_verb.is_none_or(|v| *i > v) && m.kind == MentionKind::Entity)
        .map(|(i, _)| i);
    for (i, m) in desc_ms.iter().enumerate() {
        let w = if Some(i) == object { 0.8 } else { 0.7 };
        add_mention_entities(x, m, w, 0.5, &mut entities, &mut domains);
    }
    if entities.is_empty() {
        description_object(x, &text, &desc_ms, &mut entities, &mut new_terms);
    }

    // ---- parameters
    for p in &desc.params {
        for m in x.extract(&p.name) {
            if is_term_kind(m.kind) {
                add_mention_entities(x, &m, 0.4, 0.0, &mut entities, &mut domains);
            }
        }
        for m in x.extract(&p.description) {
            if is_term_kind(m.kind) {
                add_mention_entities(x, &m, 0.3, 0.0, &mut entities, &mut domains);
            }
        }
    }

    let read_only = desc.read_only.unwrap_or_else(|| {
        verb_lemma
            .as_deref()
            .and_then(|v| v.split_whitespace().next())
            .is_some_and(words::is_read_verb)
            || verbs
                .0
                .first()
                .is_some_and(|l| words::is_read_verb(&lemma(local_name(&l.iri))))
    });

    Constellation {
        descriptor: desc.clone(),
        iri: tool_iri(&desc.id),
        verbs: verbs.done(),
        entities: entities.done(),
        domains: domains.done(),
        new_terms,
        new_verbs,
        read_only,
        depends_on: desc.depends_on.clone(),
        warnings,
    }
}

/// Entity links (and brand domains) carried by one mention. `w` scales
/// entity and value weights; `brand_domain` is the brand's domain weight.
fn add_mention_entities(
    x: &Extractor,
    m: &Mention,
    w: f32,
    brand_domain: f32,
    entities: &mut Links,
    domains: &mut Links,
) {
    match m.kind {
        MentionKind::Entity => {
            for r in &m.iris {
                entities.add(&r.iri, &label_of(x, &r.iri), w * r.weight);
            }
        }
        MentionKind::Brand => {
            // iris: [brand, class, …]: the classes are what the tool acts on.
            for r in m.iris.iter().filter(|r| r.iri.starts_with(vocab::ENT)) {
                entities.add(&r.iri, &label_of(x, &r.iri), w * r.weight);
            }
            if brand_domain > 0.0
                && let Some(iri) = vocab::mint(vocab::DOMAIN, &m.value)
            {
                domains.add(&iri, &m.surface, brand_domain);
            }
        }
        MentionKind::Verb | MentionKind::ProperNoun | MentionKind::Quoted => {}
        _ => {
            for r in &m.iris {
                entities.add(&r.iri, &label_of(x, &r.iri), 0.5 * w * r.weight);
            }
        }
    }
}

fn mint_verb(l: &str, w: f32, verbs: &mut Links, new_verbs: &mut Vec<NewTerm>) {
    // a function word is never a verb ("The AI has to …")
    if words::is_stop(l) {
        return;
    }
    let Some(iri) = vocab::mint(vocab::VERB, l) else {
        return;
    };
    verbs.add(&iri, l, w);
    if !new_verbs.iter().any(|t| t.iri == iri) {
        new_verbs.push(NewTerm {
            iri,
            label: l.to_string(),
            broader: Vec::new(),
        });
    }
}

fn mint_term(
    toks: &[&tokens::Token<'_>],
    broader: Vec<String>,
    w: f32,
    entities: &mut Links,
    new_terms: &mut Vec<NewTerm>,
) {
    let label = toks
        .iter()
        .map(|t| t.lemma.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let Some(iri) = vocab::mint(vocab::TERM, &label) else {
        return;
    };
    entities.add(&iri, &label, w);
    if !new_terms.iter().any(|t| t.iri == iri) {
        new_terms.push(NewTerm {
            iri,
            label,
            broader,
        });
    }
}

/// The description's direct object as an open term: after the first verb
/// (or the first word), skip determiners, take words up to a function word,
/// a participle or punctuation, and keep the last one (the head noun).
fn description_object(
    x: &Extractor,
    text: &str,
    ms: &[Mention],
    entities: &mut Links,
    new_terms: &mut Vec<NewTerm>,
) {
    let lex = x.lexicon();
    let toks = tokens::tokenize(text, &|w| lex.is_whole_word(w), &|l| {
        lex.is_verb_lemma(l) || words::is_common_verb(l)
    });
    let start = ms
        .iter()
        .find(|m| m.kind == MentionKind::Verb)
        .map_or(0, |m| m.end);
    let mut iter = toks.iter().filter(|t| t.start >= start).peekable();
    if start == 0 {
        iter.next(); // the first word is the (unknown) verb
    }
    let mut head: Option<&tokens::Token<'_>> = None;
    for t in iter {
        if t.hard_before && head.is_some() {
            break;
        }
        let stop = words::is_stop(&t.lower);
        if stop && head.is_none() {
            continue;
        }
        if stop
            || t.lower.ends_with("ed")
            || t.lower.ends_with("ing")
            || t.lower.chars().any(|c| c.is_ascii_digit())
        {
            break;
        }
        head = Some(t);
    }
    if let Some(h) = head
        && h.lower.chars().count() >= 3
        && !ms.iter().any(|m| m.start <= h.start && h.end <= m.end)
    {
        mint_term(&[h], Vec::new(), 0.5, entities, new_terms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::tests::fixture;
    use crate::model::Param;
    use crate::vocab::{ENT, TERM, VERB, slug};

    fn desc(name: &str, description: &str) -> ToolDescriptor {
        ToolDescriptor {
            id: name.into(),
            name: name.into(),
            description: description.into(),
            ..Default::default()
        }
    }

    fn iris(l: &[Link]) -> Vec<&str> {
        l.iter().map(|l| l.iri.as_str()).collect()
    }

    #[test]
    fn iri_encoding() {
        assert_eq!(tool_iri("get_user"), format!("{}get_user", vocab::TOOL));
        assert_eq!(
            tool_iri("name#ab12cd34"),
            format!("{}name%23ab12cd34", vocab::TOOL)
        );
        assert_eq!(tool_iri("a b/é"), format!("{}a%20b%2F%C3%A9", vocab::TOOL));
        assert_eq!(slug("Chemical Engineering"), "chemical_engineering");
        assert_eq!(slug("  Café!! "), "caf%C3%A9");
    }

    #[test]
    fn name_verb_and_entities() {
        let x = fixture();
        let c = build(
            &desc("MAKE_RESERVATION", "Reserve a table at a restaurant."),
            &x,
        );
        assert_eq!(iris(&c.verbs), [format!("{VERB}reserve")]);
        assert_eq!(c.entities[0].iri, format!("{ENT}Reservation"));
        assert!((c.entities[0].weight - 1.0).abs() < 1e-6);
        assert!(iris(&c.entities).contains(&format!("{ENT}Restaurant").as_str()));
        assert!(
            c.entities
                .iter()
                .all(|l| l.provenance == Provenance::Extracted)
        );
        assert!(!c.read_only);
        assert!(c.new_terms.is_empty());

        let c = build(&desc("getWeather", "Get the weather for a location"), &x);
        assert!(c.read_only);
        assert_eq!(c.entities[0].iri, format!("{ENT}Weather"));
    }

    #[test]
    fn open_vocabulary_terms_are_shared() {
        let x = fixture();
        let a = build(&desc("create_invoice", "Create an invoice"), &x);
        let b = build(&desc("sendInvoiceReminder", "Send a reminder"), &x);
        let inv = format!("{TERM}invoice");
        assert!(
            iris(&a.entities).contains(&inv.as_str()),
            "{:?}",
            a.entities
        );
        assert!(
            iris(&b.entities).contains(&inv.as_str()),
            "{:?}",
            b.entities
        );
        assert_eq!(a.new_terms[0].label, "invoice");
        // `send` is not in the fixture ontology: minted from the common verb list
        assert_eq!(iris(&b.verbs), [format!("{VERB}send")]);
        assert_eq!(b.new_verbs[0].label, "send");
        assert!(!b.read_only);
    }

    #[test]
    fn compound_terms_get_broader() {
        let x = fixture();
        let c = build(&desc("get_loyalty_profile", ""), &x);
        let t = c
            .new_terms
            .iter()
            .find(|t| t.label == "loyalty profile")
            .expect("compound");
        assert_eq!(t.broader, [format!("{ENT}Profile")]);
        assert!(c.new_terms.iter().any(|t| t.label == "loyalty"));
    }

    #[test]
    fn domains_and_params() {
        let x = fixture();
        let mut d = desc("Movies_1_FindMovies", "Search for movies by genre");
        d.tags = vec!["Entertainment/Film".into()];
        d.params = vec![Param {
            name: "location".into(),
            description: "The city or area".into(),
            ..Default::default()
        }];
        d.depends_on = vec![crate::model::Dependency::on("x")];
        let c = build(&d, &x);
        assert_eq!(
            iris(&c.domains),
            [
                format!("{}entertainment", vocab::DOMAIN),
                format!("{}movies", vocab::DOMAIN),
                format!("{}film", vocab::DOMAIN),
            ]
        );
        assert_eq!(iris(&c.verbs), [format!("{VERB}search")]);
        assert_eq!(c.entities[0].iri, format!("{ENT}Movie"));
        let place = c
            .entities
            .iter()
            .find(|l| l.iri == format!("{ENT}Place"))
            .expect("param");
        assert!((place.weight - 0.4).abs() < 1e-6);
        assert!(c.read_only);
        assert_eq!(c.depends_on, [crate::model::Dependency::on("x")]);
        assert_eq!(c.iri, tool_iri("Movies_1_FindMovies"));

        let c = build(&desc("math.triangle_area_heron", "Compute the area"), &x);
        assert_eq!(iris(&c.domains), [format!("{}math", vocab::DOMAIN)]);
        assert!(c.entities.iter().any(|l| l.iri == format!("{ENT}Area")));
    }

    #[test]
    fn brands_link_their_class_and_domain() {
        let x = fixture();
        let c = build(
            &desc("southwest_book_flight", "Book a Southwest flight"),
            &x,
        );
        assert!(iris(&c.entities).contains(&format!("{ENT}Airline").as_str()));
        assert!(iris(&c.entities).contains(&format!("{ENT}Flight").as_str()));
        assert!(iris(&c.domains).contains(&format!("{}southwest", vocab::DOMAIN).as_str()));
        assert_eq!(iris(&c.verbs), [format!("{VERB}book")]);
    }

    #[test]
    fn a_tool_without_a_known_verb_gets_one_minted_and_a_warning() {
        let x = fixture();
        let c = build(
            &desc("TimePort", "Teleports you to a moment in history"),
            &x,
        );
        assert_eq!(iris(&c.verbs), [format!("{VERB}teleport")]);
        assert!(
            c.warnings[0].contains("verb:teleport from its description"),
            "{:?}",
            c.warnings
        );
        let c = build(&desc("ad4mat", "API to monetize outgoing traffic"), &x);
        assert_eq!(iris(&c.verbs), [format!("{VERB}monetize")]);
        let c = build(
            &desc(
                "CarYardBard",
                "AI-Powered Car Sales Ad Generator for Dealers",
            ),
            &x,
        );
        assert_eq!(iris(&c.verbs), [format!("{VERB}generate")]);
        let c = build(&desc("AppyPieAIAppBuilder", ""), &x);
        assert_eq!(iris(&c.verbs), [format!("{VERB}build")]);
        let c = build(&desc("grabObject", ""), &x);
        assert_eq!(iris(&c.verbs), [format!("{VERB}grab")]);
        assert!(c.warnings[0].contains("from its name"), "{:?}", c.warnings);
        let c = build(&desc("convertCurrency", "Convert money"), &x);
        assert!(c.warnings.is_empty());
        // a function word never becomes a verb
        let c = build(
            &desc(
                "word_sneak",
                "The AI has to sneak 3 secret words into your conversation.",
            ),
            &x,
        );
        assert_eq!(iris(&c.verbs), [format!("{VERB}sneak")]);
        let c = build(&desc("RoboAd", "Your AI powered Ad Assistant!"), &x);
        assert_eq!(iris(&c.verbs), [format!("{VERB}assist")]);
    }

    #[test]
    fn description_fallbacks() {
        let x = fixture();
        let c = build(
            &desc("f", "Analyze the chemical evidence collected from a scene"),
            &x,
        );
        assert_eq!(iris(&c.verbs), [format!("{VERB}analyze")]);
        assert_eq!(iris(&c.entities), [format!("{TERM}evidence")]);
        let c = build(&desc("", ""), &x);
        assert!(c.verbs.is_empty() && c.entities.is_empty());
        let again = build(&desc("analyzeEvidence", "Analyze evidence"), &x);
        assert_eq!(
            again,
            build(&desc("analyzeEvidence", "Analyze evidence"), &x)
        );
    }
}
