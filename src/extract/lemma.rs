//! A small, predictable lemmatiser for English tool vocabulary.
//!
//! It is not a full morphological analyser: its job is to make a label and
//! a request word meet at the same key ("flights" and "flight", "booked"
//! and "book"). Both sides go through the same function, so consistency
//! matters more than linguistic correctness. Rules, in order:
//!
//! 1. Lower-case. Words shorter than 3 bytes, words containing digits and
//!    words without a vowel (`sms`, `gps`, `https`) are returned as is.
//! 2. An irregular table (`people -> person`, `children -> child`,
//!    `made -> make`, `sent -> send`, `paid -> pay`, `data -> data`, …) and a
//!    keep list (`bus`, `news`, `status`, `analysis`, `series`, `gas`, `this`,
//!    `morning`, `during`, `string`, …) win over the rules below.
//! 3. Plurals / 3rd person: `-ies -> -y` (`countries`), except `-ie` nouns
//!    (`movies -> movie`); `-sses -> -ss`, `-xes -> -x`, `-zzes`, `-ches`,
//!    `-shes` drop `es` (`addresses`, `boxes`, `matches`); `-oes -> -o`;
//!    otherwise a final `s` is dropped when the word has 4+ bytes and does
//!    not end in `ss`, `us` or `is` (`flights`, `reservations`, `books`).
//! 4. Verb forms: `-ied -> -y` (`applied`); `-ed` and `-ing` are stripped
//!    when at least 3 bytes with a vowel remain (`booked`, `booking`), never
//!    from `-eed` words (`need`, `speed`); then the stem is repaired:
//!    a doubled final consonant is undoubled (`stopped -> stop`,
//!    `cancelled -> cancel`; `ll`/`ss`/`zz`/`ff` stay except `cancell`,
//!    `labell`, `travell`, `modell`, `totall`, `signall`), and a silent `e`
//!    is restored after `v`, `c`, `-iz`/`-yz`, `-bl`, `-ut`, `-ur`, `-ul`,
//!    `-ang`, `-ag`, `-yp`, a consonant + `at` (`updat`, `creat`), vowel + `s`
//!    (`clos`, `purchas`) and a consonant-vowel-consonant one-syllable stem (`reserving -> reserve`, `creating -> create`,
//!    `making -> make`, `scheduling -> schedule`, `pricing -> price`).
//!
//! Gerund nouns therefore collapse onto their verb (`booking -> book`,
//! `meeting -> meet`); the extractor keeps exact word forms as a
//! tie-breaker, so a label "booking" still beats the verb "book" on the
//! word "booking".

/// Lemma of one word: see the module documentation for the rules.
pub fn lemma(word: &str) -> String {
    let w = word.to_lowercase();
    // The suffix rules work on ASCII bytes (a word of other letters kept
    // whole: libFuzzer found `…»»ing` cut inside a character).
    if w.len() < 3 || !w.is_ascii() || w.bytes().any(|b| b.is_ascii_digit()) || !has_vowel(&w) {
        return w;
    }
    if let Some(irr) = irregular(&w) {
        return irr.to_string();
    }
    if KEEP.contains(&w.as_str()) {
        return w;
    }
    if let Some(s) = plural(&w) {
        // `bookings` -> `booking` -> `book`, like `booking` itself.
        if KEEP.contains(&s.as_str()) {
            return s;
        }
        if let Some(irr) = irregular(&s) {
            return irr.to_string();
        }
        return verb_form(&s).unwrap_or(s);
    }
    if let Some(s) = verb_form(&w) {
        return s;
    }
    w
}

fn has_vowel(w: &str) -> bool {
    w.chars()
        .any(|c| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y'))
}

fn is_vowel(c: u8) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// Words the suffix rules must not touch.
const KEEP: &[&str] = &[
    "bus",
    "news",
    "status",
    "analysis",
    "basis",
    "series",
    "species",
    "gas",
    "this",
    "his",
    "has",
    "was",
    "is",
    "its",
    "yes",
    "plus",
    "bonus",
    "virus",
    "campus",
    "census",
    "chess",
    "alias",
    "atlas",
    "canvas",
    "bias",
    "christmas",
    "texas",
    "vegas",
    "kansas",
    "paris",
    "always",
    "perhaps",
    "towards",
    "thanks",
    "lens",
    "kudos",
    "physics",
    "mathematics",
    "economics",
    "politics",
    "athletics",
    "analytics",
    "statistics",
    "logistics",
    "genetics",
    "electronics",
    "robotics",
    "linguistics",
    "ethics",
    "aerobics",
    "diabetes",
    "mumps",
    "morning",
    "evening",
    "during",
    "thing",
    "nothing",
    "something",
    "anything",
    "everything",
    "string",
    "spring",
    "ceiling",
    "king",
    "ring",
    "wing",
    "sibling",
    "pudding",
    "ping",
    "bring",
    "sing",
    "swing",
    "sting",
    "bing",
    "ding",
    "ming",
    "viking",
    "lightning",
    "wedding",
    "need",
    "speed",
    "seed",
    "feed",
    "bleed",
    "breed",
    "greed",
    "weed",
    "deed",
    "hundred",
    "red",
    "bed",
    "shed",
    "sled",
    "bred",
    "fed",
    "led",
    "wed",
    "bled",
    "sped",
    "united",
    "limited",
    "embed",
    "proceed",
    "succeed",
    "exceed",
    "indeed",
    "tweed",
    "reed",
    "creed",
    "does",
    "goes",
    "iris",
    "tennis",
    "axis",
    "crisis",
    "thesis",
    "diagnosis",
    "synopsis",
    "emphasis",
    "hypothesis",
    "oasis",
    "chassis",
    "gps",
    "sms",
    "dns",
    "aws",
    "ios",
    "macos",
    "windows",
    "ads",
    "us",
    "bonus",
    "minus",
    "focus",
    "corpus",
    "genus",
    "fungus",
    "cactus",
    "octopus",
    "radius",
    "nexus",
    "sinus",
    "stimulus",
    "syllabus",
    "circus",
    "walrus",
    "asparagus",
    "hummus",
    "lotus",
    "versus",
    "previous",
    "various",
    "famous",
    "serious",
    "nervous",
    "anonymous",
    "continuous",
    "numerous",
    "dangerous",
    "delicious",
    "obvious",
    "cross",
    "less",
    "unless",
    "across",
    "bless",
    "dress",
    "kiss",
    "miss",
    "boss",
    "loss",
    "glass",
    "grass",
    "class",
    "pass",
    "mass",
    "press",
    "process",
    "access",
    "address",
    "business",
    "success",
    "fitness",
    "wellness",
    "wireless",
    "express",
    "progress",
];

fn irregular(w: &str) -> Option<&'static str> {
    Some(match w {
        "people" => "person",
        "persons" => "person",
        "children" => "child",
        "men" => "man",
        "women" => "woman",
        "feet" => "foot",
        "teeth" => "tooth",
        "mice" => "mouse",
        "geese" => "goose",
        "data" => "data",
        "criteria" => "criterion",
        "phenomena" => "phenomenon",
        "indices" => "index",
        "matrices" => "matrix",
        "vertices" => "vertex",
        "appendices" => "appendix",
        "analyses" => "analysis",
        "diagnoses" => "diagnosis",
        "theses" => "thesis",
        "crises" => "crisis",
        "axes" => "axis",
        "leaves" => "leaf",
        "knives" => "knife",
        "lives" => "life",
        "wives" => "wife",
        "shelves" => "shelf",
        "halves" => "half",
        "wolves" => "wolf",
        "thieves" => "thief",
        "loaves" => "loaf",
        "calves" => "calf",
        "buses" => "bus",
        "gases" => "gas",
        "statuses" => "status",
        "viruses" => "virus",
        "campuses" => "campus",
        "bonuses" => "bonus",
        "focuses" => "focus",
        "aliases" => "alias",
        "menus" => "menu",
        "gurus" => "guru",
        "emus" => "emu",
        "shoes" => "shoe",
        "canoes" => "canoe",
        "ids" => "id",
        "used" => "use",
        "uses" => "use",
        "using" => "use",
        "made" => "make",
        "making" => "make",
        "makes" => "make",
        "sent" => "send",
        "paid" => "pay",
        "bought" => "buy",
        "sold" => "sell",
        "found" => "find",
        "got" => "get",
        "gotten" => "get",
        "taken" => "take",
        "took" => "take",
        "gave" => "give",
        "given" => "give",
        "wrote" => "write",
        "written" => "write",
        "writing" => "write",
        "ran" => "run",
        "running" => "run",
        "began" => "begin",
        "begun" => "begin",
        "chose" => "choose",
        "chosen" => "choose",
        "held" => "hold",
        "kept" => "keep",
        "brought" => "bring",
        "built" => "build",
        "spent" => "spend",
        "went" => "go",
        "gone" => "go",
        "saw" => "see",
        "seen" => "see",
        "knew" => "know",
        "known" => "know",
        "told" => "tell",
        "flew" => "fly",
        "flown" => "fly",
        "ate" => "eat",
        "eaten" => "eat",
        "drove" => "drive",
        "driven" => "drive",
        "rode" => "ride",
        "ridden" => "ride",
        "lost" => "lose",
        "met" => "meet",
        "left" => "left",
        "cancelled" => "cancel",
        "canceled" => "cancel",
        "cancelling" => "cancel",
        "canceling" => "cancel",
        "having" => "have",
        "giving" => "give",
        "leaving" => "leave",
        "moving" => "move",
        "saving" => "save",
        "coming" => "come",
        "came" => "come",
        "becoming" => "become",
        "became" => "become",
        "are" => "be",
        "was" => "be",
        "were" => "be",
        "been" => "be",
        "being" => "be",
        _ => return None,
    })
}

/// `-ie` nouns whose plural must not become `-y`.
const IE_NOUNS: &[&str] = &[
    "movie", "cookie", "calorie", "zombie", "rookie", "selfie", "smoothie", "pie", "tie", "lie",
    "die", "prairie", "lingerie", "newbie", "goalie", "freebie", "brownie", "budgie", "auntie",
    "sortie", "hoodie", "foodie", "genie", "techie", "veggie", "birdie", "eerie", "indie",
];

fn plural(w: &str) -> Option<String> {
    let b = w.as_bytes();
    if !w.ends_with('s') || w.len() < 4 {
        return None;
    }
    if let Some(stem) = w.strip_suffix("ies") {
        let ie = format!("{stem}ie");
        if IE_NOUNS.contains(&ie.as_str()) {
            return Some(ie);
        }
        if stem.len() >= 2 {
            return Some(format!("{stem}y"));
        }
        return None;
    }
    for suf in ["sses", "xes", "zzes", "ches", "shes"] {
        if w.ends_with(suf) {
            return Some(w[..w.len() - 2].to_string());
        }
    }
    if let Some(stem) = w.strip_suffix("oes")
        && stem.len() >= 2
    {
        return Some(format!("{stem}o"));
    }
    let prev = b[b.len() - 2];
    if matches!(prev, b's' | b'u' | b'i') || w.ends_with("'s") {
        return None;
    }
    Some(w[..w.len() - 1].to_string())
}

fn verb_form(w: &str) -> Option<String> {
    if let Some(stem) = w.strip_suffix("ied")
        && stem.len() >= 2
    {
        return Some(format!("{stem}y"));
    }
    if w.ends_with("eed") {
        return None;
    }
    let stem = w.strip_suffix("ed").or_else(|| w.strip_suffix("ing"))?;
    if stem.len() < 3 || !has_vowel(stem) {
        return None;
    }
    Some(repair(stem))
}

/// Undo consonant doubling and restore a silent `e` on a stripped stem.
fn repair(stem: &str) -> String {
    let b = stem.as_bytes();
    let n = b.len();
    let last = b[n - 1];
    let prev = b[n - 2];
    if matches!(
        stem,
        "cancell" | "labell" | "travell" | "modell" | "totall" | "signall"
    ) {
        return stem[..n - 1].to_string();
    }
    if last == prev && !is_vowel(last) && !matches!(last, b'l' | b's' | b'z' | b'f') {
        if matches!(stem, "add" | "err" | "purr" | "odd" | "egg") {
            return stem.to_string();
        }
        return stem[..n - 1].to_string();
    }
    let needs_e = last == b'v'
        || stem.ends_with("iz")
        || stem.ends_with("yz")
        || stem.ends_with("bl")
        || (stem.ends_with("at") && n > 3 && (!is_vowel(b[n - 3]) || b[n - 3] == b'u'))
        || stem.ends_with("creat")
        || stem.ends_with("yp")
        || stem == "quot"
        || stem.ends_with("ut")
        || (stem.ends_with("ur") && n > 4)
        || (stem.ends_with("ul") && !stem.ends_with("ull"))
        || (stem.ends_with("ang") && n > 4)
        || (stem.ends_with("ag") && n > 4)
        || last == b'c'
        || (last == b's' && is_vowel(prev) && n > 3 && stem != "focus")
        || short_cvc(stem);
    if needs_e && !stem.ends_with('e') {
        return format!("{stem}e");
    }
    stem.to_string()
}

/// One-syllable consonant-vowel-consonant stems take back their `e`
/// (`mak`, `rat`, `shar` -> `make`, `rate`, `share`); `w`, `x`, `y` endings
/// never do, and neither do a few common stems that really end there.
fn short_cvc(stem: &str) -> bool {
    let b = stem.as_bytes();
    let n = b.len();
    if !(3..=4).contains(&n) {
        return false;
    }
    let (c1, v, c2) = (b[n - 3], b[n - 2], b[n - 1]);
    let vowels = b.iter().filter(|c| is_vowel(**c)).count();
    vowels == 1
        && !is_vowel(c1)
        && is_vowel(v)
        && !is_vowel(c2)
        && !matches!(c2, b'w' | b'x' | b'y')
        && !matches!(
            stem,
            "open"
                | "list"
                | "post"
                | "edit"
                | "visit"
                | "limit"
                | "fix"
                | "mix"
                | "log"
                | "tag"
                | "chat"
                | "plan"
                | "scan"
                | "ship"
                | "shop"
                | "stop"
                | "drop"
                | "book"
                | "look"
                | "cook"
                | "pick"
                | "lock"
                | "rent"
                | "sort"
                | "talk"
                | "walk"
                | "park"
                | "mark"
                | "work"
                | "pin"
                | "win"
                | "run"
                | "set"
                | "get"
                | "put"
                | "cut"
                | "sit"
                | "hit"
                | "end"
                | "send"
                | "find"
                | "add"
                | "check"
                | "start"
                | "help"
                | "test"
                | "text"
                | "print"
                | "track"
                | "flag"
                | "ban"
                | "span"
                | "map"
                | "sum"
                | "jog"
                | "pet"
                | "hunt"
                | "rob"
                | "beg"
                | "nod"
                | "dip"
                | "rip"
                | "tip"
                | "zip"
                | "wrap"
                | "trap"
                | "clip"
                | "skip"
                | "slip"
                | "trip"
                | "ring"
                | "sing"
                | "bet"
                | "let"
                | "net"
                | "jam"
                | "ram"
                | "cram"
                | "spam"
                | "scam"
                | "bar"
                | "car"
                | "star"
                | "scar"
                | "war"
                | "jar"
                | "tar"
                | "fur"
                | "bur"
                | "stir"
                | "blur"
                | "spur"
                | "fly"
                | "show"
                | "view"
                | "flow"
                | "grow"
                | "draw"
                | "know"
                | "pull"
                | "push"
                | "fill"
                | "call"
                | "sell"
                | "tell"
                | "roll"
                | "poll"
                | "kill"
                | "mail"
                | "sail"
                | "fail"
                | "wait"
                | "rain"
                | "join"
                | "load"
                | "read"
                | "lead"
                | "hear"
                | "wear"
                | "tear"
                | "bear"
                | "heal"
                | "seal"
                | "deal"
                | "meet"
                | "feel"
                | "need"
                | "seem"
                | "rank"
                | "bank"
                | "thank"
                | "think"
                | "ask"
                | "play"
                | "stay"
                | "pay"
                | "say"
                | "lay"
                | "pray"
                | "obey"
                | "sew"
                | "mow"
                | "bat"
                | "cat"
                | "hat"
                | "mat"
                | "pat"
                | "vat"
                | "brag"
                | "drag"
                | "lag"
                | "nag"
                | "wag"
                | "rag"
        )
}

#[cfg(test)]
mod tests {
    use super::lemma;

    /// Found by libFuzzer: a stem ending in two equal non-ASCII bytes was
    /// cut inside a character.
    #[test]
    fn words_of_other_letters_are_kept_whole() {
        for w in [
            "\u{7befb}\u{7befb}ing",
            "cafés",
            "naïveté",
            "ñññed",
            "日本語ing",
            "»»ied",
        ] {
            assert_eq!(lemma(w), w.to_lowercase(), "{w}");
        }
        assert_eq!(lemma("BOOKINGS"), "book");
    }

    #[test]
    fn plurals() {
        for (w, l) in [
            ("flights", "flight"),
            ("reservations", "reservation"),
            ("countries", "country"),
            ("addresses", "address"),
            ("boxes", "box"),
            ("movies", "movie"),
            ("matches", "match"),
            ("bus", "bus"),
            ("news", "news"),
            ("status", "status"),
            ("analysis", "analysis"),
            ("class", "class"),
            ("sms", "sms"),
            ("Hotels", "hotel"),
            ("people", "person"),
            ("photos", "photo"),
            ("ideas", "idea"),
            ("databases", "database"),
            ("menus", "menu"),
        ] {
            assert_eq!(lemma(w), l, "{w}");
        }
    }

    #[test]
    fn verb_forms() {
        for (w, l) in [
            ("booking", "book"),
            ("booked", "book"),
            ("reserving", "reserve"),
            ("reserved", "reserve"),
            ("cancelled", "cancel"),
            ("canceled", "cancel"),
            ("cancelling", "cancel"),
            ("creating", "create"),
            ("created", "create"),
            ("updating", "update"),
            ("stopped", "stop"),
            ("planned", "plan"),
            ("searching", "search"),
            ("listed", "list"),
            ("applied", "apply"),
            ("scheduling", "schedule"),
            ("analyzing", "analyze"),
            ("making", "make"),
            ("getting", "get"),
            ("adding", "add"),
            ("calling", "call"),
            ("pricing", "price"),
            ("changing", "change"),
            ("computing", "compute"),
            ("enabled", "enable"),
            ("need", "need"),
            ("string", "string"),
            ("morning", "morning"),
            ("books", "book"),
            ("reserves", "reserve"),
        ] {
            assert_eq!(lemma(w), l, "{w}");
        }
    }

    #[test]
    fn idempotent_on_common_words() {
        for w in [
            "book", "reserve", "flight", "country", "address", "status", "create",
        ] {
            assert_eq!(lemma(&lemma(w)), lemma(w));
        }
    }
}
