//! Ontology IRIs as constants (keep in sync with `ontology/core.ttl`), and
//! the one place IRIs are minted from names and labels.

pub const TG: &str = "https://toolgraph.dev/ns#";
pub const VERB: &str = "https://toolgraph.dev/verb/";
pub const ENT: &str = "https://toolgraph.dev/entity/";
pub const BRAND: &str = "https://toolgraph.dev/brand/";
pub const DOMAIN: &str = "https://toolgraph.dev/domain/";
pub const CATEGORY: &str = "https://toolgraph.dev/category/";
pub const INTEGRATION: &str = "https://toolgraph.dev/integration/";
pub const CHANNEL: &str = "https://toolgraph.dev/channel/";
pub const PROFILE: &str = "https://toolgraph.dev/profile/";
pub const GOAL: &str = "https://toolgraph.dev/goal/";
pub const SUBTYPE: &str = "https://toolgraph.dev/subtype/";
pub const ORG: &str = "https://toolgraph.dev/org/";
pub const AGENT: &str = "https://toolgraph.dev/agent/";
pub const INTENT: &str = "https://toolgraph.dev/intent/";
pub const TOOL: &str = "https://toolgraph.dev/tool/";
/// Open-vocabulary entity nodes minted by the constellation builder
/// for terms the ontology does not know ("invoice" in a catalog without it).
pub const TERM: &str = "https://toolgraph.dev/term/";
/// Named graphs: curated facts of a source live in `SOURCE + name`,
/// extracted links in `SOURCE + name + "#extracted"`.
pub const SOURCE: &str = "urn:toolgraph:source:";

pub const SKOS: &str = "http://www.w3.org/2004/02/skos/core#";
pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
pub const RDFS_LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";
pub const SKOS_PREF_LABEL: &str = "http://www.w3.org/2004/02/skos/core#prefLabel";
pub const RDFS_COMMENT: &str = "http://www.w3.org/2000/01/rdf-schema#comment";
pub const SKOS_ALT_LABEL: &str = "http://www.w3.org/2004/02/skos/core#altLabel";
pub const SKOS_BROADER: &str = "http://www.w3.org/2004/02/skos/core#broader";

/// `tg:` schema terms.
pub mod tg {
    macro_rules! iri {
        ($($name:ident = $local:literal;)*) => {
            $(pub const $name: &str = concat!("https://toolgraph.dev/ns#", $local);)*
        };
    }
    iri! {
        TOOL = "Tool"; VERB = "Verb"; ENTITY = "Entity"; INSTANCE = "Instance";
        DOMAIN = "Domain"; CATEGORY = "Category"; INTEGRATION = "Integration";
        CHANNEL = "Channel"; PROFILE = "Profile"; GOAL = "Goal"; PARAMETER = "Parameter";
        PLATFORM = "Platform"; ORGANIZATION = "Organization"; AGENT = "Agent";
        AGENT_SUBTYPE = "AgentSubtype"; INTENT = "Intent";
        NAME = "name"; DESCRIPTION = "description"; MODEL_DESCRIPTION = "modelDescription"; PERFORMS = "performs"; ACTS_ON = "actsOn";
        PRIMARY_ENTITY = "primaryEntity"; MENTIONS = "mentions";
        IN_DOMAIN = "inDomain"; IN_CATEGORY = "inCategory";
        REQUIRES_INTEGRATION = "requiresIntegration"; AVAILABLE_ON_CHANNEL = "availableOnChannel";
        READ_ONLY = "readOnly"; DESTRUCTIVE = "destructive"; DEPENDS_ON = "dependsOn";
        UNIVERSAL = "universal"; PARAMETER_PROP = "parameter"; PARAM_NAME = "paramName";
        PARAM_TYPE = "paramType"; PARAM_DESCRIPTION = "paramDescription";
        PARAM_REQUIRED = "paramRequired"; PARAM_ENTITY = "paramEntity"; SOURCE = "source";
        INSTANCE_OF = "instanceOf"; EVIDENCES = "evidences"; SIBLING_OF = "siblingOf";
        ORDER = "order"; DEPENDENCY = "dependency"; DEPENDENCY_ON = "dependencyOn";
        DEPENDENCE_TYPE = "dependenceType"; DEPENDENCY_PARAMETER = "dependencyParameter";
        DEPENDENCY_REASON = "dependencyReason"; UPSTREAM = "upstream";
    }
}

/// Entity classes the extractor's structured values are evidence for.
/// The ontology must define each of these (checked by a test).
pub mod ent {
    macro_rules! iri {
        ($($name:ident = $local:literal;)*) => {
            $(pub const $name: &str = concat!("https://toolgraph.dev/entity/", $local);)*
            /// Every entity constant above, for the ontology coverage test.
            pub const ALL: &[&str] = &[$($name),*];
        };
    }
    iri! {
        FLIGHT = "Flight"; TIME = "Time"; DATE = "Date"; DURATION = "Duration";
        MONEY = "Money"; CURRENCY = "Currency"; PARTY_SIZE = "PartySize";
        EMAIL_ADDRESS = "EmailAddress"; URL = "Url"; PHONE_NUMBER = "PhoneNumber";
        PLACE = "Place"; PERSON = "Person";
    }
}

/// The tool's IRI: [`TOOL`] + the percent-encoded id (valid for any id;
/// [`tool_id`] is the inverse).
pub fn tool_iri(id: &str) -> String {
    let mut s = String::from(TOOL);
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The id inside a tool IRI minted by [`tool_iri`], if it is one.
pub fn tool_id(iri: &str) -> Option<String> {
    iri.strip_prefix(TOOL).map(percent_decode)
}

/// A node IRI minted from a label: `namespace` + [`slug`] of the label
/// (`mint(DOMAIN, "Field Service")` is `dom:field_service`, the seeds'
/// own spelling). Empty when the label has no letter or digit.
pub fn mint(namespace: &str, label: &str) -> Option<String> {
    let s = slug(label);
    (!s.is_empty()).then(|| format!("{namespace}{s}"))
}

/// A lower-case, `_`-joined slug of a label (runs of anything that is not a
/// letter or digit become one `_`, none at the ends), percent-encoded beyond
/// ASCII.
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in label.chars().flat_map(char::to_lowercase) {
        if !c.is_alphanumeric() {
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push('_');
        }
        gap = false;
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Percent-encodes what may not stand unescaped in an IRI path segment
/// (keeps ASCII letters, digits and `-._~/:`).
pub fn encode_iri_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes (the inverse of [`tool_iri`] and [`encode_iri_part`]).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Lower-case letters and digits only, for matching names as people write
/// them: `Web chat`, `webchat` and `web_chat` meet.
pub fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The last path segment or fragment of an IRI.
pub fn local_name(iri: &str) -> &str {
    iri.rsplit(['/', '#']).next().unwrap_or(iri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_join_words_with_underscores_like_the_seeds() {
        assert_eq!(slug("Field Service"), "field_service");
        assert_eq!(slug("  stripe--connect  "), "stripe_connect");
        assert_eq!(slug("Café au lait"), "caf%C3%A9_au_lait");
        assert_eq!(slug("?!"), "");
        assert_eq!(
            mint(DOMAIN, "Org data").as_deref(),
            Some("https://toolgraph.dev/domain/org_data")
        );
        assert_eq!(mint(DOMAIN, "--"), None);
    }

    #[test]
    fn tool_iris_round_trip_any_id() {
        for id in ["airline_seat_reserve", "a b/c#d", "weather%", "Über.tool~1"] {
            assert_eq!(tool_id(&tool_iri(id)).as_deref(), Some(id));
        }
        assert_eq!(tool_id("https://example.com/x"), None);
    }
}
