//! Ontology IRIs as constants. Keep in sync with `ontology/core.ttl`.

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
        NAME = "name"; DESCRIPTION = "description"; MODEL_DESCRIPTION = "modelDescription"; PERFORMS = "performs"; ACTS_ON = "actsOn";
        PRIMARY_ENTITY = "primaryEntity"; MENTIONS = "mentions";
        IN_DOMAIN = "inDomain"; IN_CATEGORY = "inCategory";
        REQUIRES_INTEGRATION = "requiresIntegration"; AVAILABLE_ON_CHANNEL = "availableOnChannel";
        READ_ONLY = "readOnly"; DESTRUCTIVE = "destructive"; DEPENDS_ON = "dependsOn";
        UNIVERSAL = "universal"; PARAMETER_PROP = "parameter"; PARAM_NAME = "paramName";
        PARAM_TYPE = "paramType"; PARAM_DESCRIPTION = "paramDescription";
        PARAM_REQUIRED = "paramRequired"; PARAM_ENTITY = "paramEntity"; SOURCE = "source";
        INSTANCE_OF = "instanceOf"; EVIDENCES = "evidences"; SIBLING_OF = "siblingOf";
        ORDER = "order";
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
