//! Plain data shared by every module: tools, descriptors, mentions, scores.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Where a link in a constellation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    /// Written by an ontologist (Turtle seeds) or declared in a manifest.
    Curated,
    /// Derived by the constellation builder from names and descriptions.
    Extracted,
}

/// One parameter of a tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Param {
    pub name: String,
    /// Shared, like the type and entity: a catalog repeats a few
    /// parameter descriptions ("Maximum number of results") and types
    /// over thousands of tools, held once each when the store is read.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[schema(value_type = String)]
    pub description: Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub ty: Option<Arc<str>>,
    #[serde(default)]
    pub required: bool,
    /// The entity class the parameter takes (`tg:paramEntity`), when an
    /// ontologist said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub entity: Option<Arc<str>>,
}

fn is_empty(s: &Arc<str>) -> bool {
    s.is_empty()
}

impl Param {
    /// A required parameter called `name`, nothing else said.
    pub fn required(name: &str) -> Self {
        Self {
            name: name.to_string(),
            description: Arc::default(),
            ty: None,
            required: true,
            entity: None,
        }
    }

    /// A tool's parameters as the catalog holds them: one per name (the
    /// fullest description kept when sources disagree), required ones first,
    /// then by name. Independent of the order they arrive in.
    pub fn canonical(mut params: Vec<Param>) -> Vec<Param> {
        params.sort_by(|a, b| {
            a.name
                .cmp(&b.name)
                .then(b.description.len().cmp(&a.description.len()))
                .then(a.description.cmp(&b.description))
                .then(b.required.cmp(&a.required))
                .then(a.ty.cmp(&b.ty))
                .then(a.entity.cmp(&b.entity))
        });
        params.dedup_by(|a, b| a.name == b.name);
        params.sort_by(|a, b| b.required.cmp(&a.required).then(a.name.cmp(&b.name)));
        params
    }
}

/// A tool as an importer sees it, before it is linked to the ontology.
///
/// Every importer (MCP `tools/list`, OpenAPI, JSONL, Turtle) produces these;
/// the constellation builder turns them into graph links.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolDescriptor {
    /// Unique id in the catalog (the dataset id, or the name).
    pub id: String,
    /// Callable name (`airline_seat_reserve`, `Movies_1_FindMovies`).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    /// Guidance written for a model rather than a person: when and how to
    /// use the tool (an OpenAI plugin's `description_for_model`). Embedded,
    /// not indexed for words: it is long and full of generic instructions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model_description: String,
    #[serde(default)]
    pub params: Vec<Param>,
    /// `Some(true)` for GET operations and `readOnlyHint: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// OpenAPI tags, MCP server name, dataset field: become domain links.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Tools this one depends on (ids or names), plain or typed.
    #[serde(default)]
    pub depends_on: Vec<Dependency>,
    /// Integrations it needs (stripe, resend).
    #[serde(default)]
    pub integrations: Vec<String>,
    /// Categories it belongs to (`booking`, or a category IRI): what caller
    /// profiles and goals name. Declared by a manifest or set when the
    /// airlock approves the tool; a tool without one gets one inferred from
    /// the curated tools it resembles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// Where it came from: `file.json#/tools/3`, `spec.yaml#/paths/~1pets/get`.
    #[serde(default)]
    pub source: String,
    /// Where a call to it goes (an MCP server's tool, an HTTP operation);
    /// none: it cannot be called through toolgraph (`no_upstream`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
}

/// Where a call to a tool goes. Set by the importers (an MCP source's
/// server, an OpenAPI operation) or declared in a manifest; stored with the
/// tool (`tg:upstream`, its JSON) and pinned with its content when the
/// airlock approves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Upstream {
    /// `tools/call` on an MCP server (Streamable HTTP).
    Mcp {
        /// The server's endpoint, `http(s)://host/mcp`.
        url: String,
        /// The tool's name on that server.
        tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        auth: Option<UpstreamAuth>,
        /// The tool's declared `outputSchema`: its `structuredContent` is
        /// checked against it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_schema: Option<serde_json::Value>,
    },
    /// One HTTP operation.
    Http {
        /// `GET`, `POST`, …
        method: String,
        /// The URL, path parameters as `{name}`: `https://api.example.com/pets/{id}`.
        url: String,
        /// Where each argument goes (`path`, `query`, `header`, `body`); an
        /// argument not named here goes in the JSON body (GET, DELETE: the
        /// query).
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        params: std::collections::BTreeMap<String, ParamIn>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        auth: Option<UpstreamAuth>,
        /// The JSON schema of a successful answer (the operation's 2xx
        /// `application/json` response): the answer is checked against it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_schema: Option<serde_json::Value>,
    },
}

/// Where an HTTP operation's argument goes (OpenAPI's `in`; `body`: a
/// property of the JSON request body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParamIn {
    Path,
    Query,
    Header,
    Body,
}

/// How a call proves who it is: a secret of the caller's organization for
/// one integration (from the secrets file), sent as a bearer token or an
/// API key in a header or the query.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamAuth {
    /// The secret's name in the secrets file (an integration: `petstore`).
    pub secret: String,
    #[serde(default)]
    pub scheme: AuthScheme,
    /// The header or query parameter (API keys): `X-API-Key`, `api_key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// OpenAPI's security scheme kinds toolgraph sends.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AuthScheme {
    /// `Authorization: Bearer <secret>`.
    #[default]
    Bearer,
    /// `<name>: <secret>`.
    Header,
    /// `?<name>=<secret>`.
    Query,
}

impl Upstream {
    /// The host it calls (for pinning and reach checks).
    pub fn url(&self) -> &str {
        match self {
            Upstream::Mcp { url, .. } | Upstream::Http { url, .. } => url,
        }
    }

    pub fn auth(&self) -> Option<&UpstreamAuth> {
        match self {
            Upstream::Mcp { auth, .. } | Upstream::Http { auth, .. } => auth.as_ref(),
        }
    }

    /// The declared schema of its answers.
    pub fn output_schema(&self) -> Option<&serde_json::Value> {
        match self {
            Upstream::Mcp { output_schema, .. } | Upstream::Http { output_schema, .. } => {
                output_schema.as_ref()
            }
        }
    }
}

/// One declared dependency: the tool `on` must run first. A manifest may
/// give a plain name (`"get_timezone"`) or an object `{name,
/// dependence_type, parameter_name, reason}`; both deserialize.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, utoipa::ToSchema,
)]
pub struct Dependency {
    /// Id or name of the tool depended on (its name once in the catalog).
    pub on: String,
    #[serde(flatten)]
    pub facts: DependencyFacts,
}

/// What a dependency says beyond its two tools: how, through which
/// parameter, why. One definition for manifests, the catalog's edges,
/// `GET /v1/tools/{name}/dependencies` and a match's `prerequisite_of`.
#[derive(
    Debug,
    Clone,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
pub struct DependencyFacts {
    /// How it depends (`PARAMETER_DIRECTLY_DEPENDS_ON`), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The parameter the other tool's output feeds (`timezone`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl DependencyFacts {
    /// Nothing said beyond the two tools.
    pub fn is_empty(&self) -> bool {
        self.kind.is_none() && self.parameter.is_none() && self.reason.is_none()
    }
}

impl Dependency {
    /// A plain dependency on `on`.
    pub fn on(on: impl Into<String>) -> Self {
        Self {
            on: on.into(),
            ..Self::default()
        }
    }

    /// Has a kind, a parameter or a reason (stored as a qualified edge).
    pub fn is_qualified(&self) -> bool {
        !self.facts.is_empty()
    }
}

impl<'de> Deserialize<'de> for Dependency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Typed {
            #[serde(alias = "name", alias = "tool")]
            on: String,
            #[serde(default, alias = "dependence_type", alias = "type")]
            kind: Option<String>,
            #[serde(default, alias = "parameter_name")]
            parameter: Option<String>,
            #[serde(default)]
            reason: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Name(String),
            Typed(Typed),
        }
        Ok(match Either::deserialize(d)? {
            Either::Name(on) => Dependency::on(on),
            Either::Typed(t) => Dependency {
                on: t.on,
                facts: DependencyFacts {
                    kind: t.kind,
                    parameter: t.parameter,
                    reason: t.reason,
                },
            },
        })
    }
}

/// A link from a tool to an ontology node, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Link {
    /// Shared: a catalog's links point at a few thousand ontology nodes, so
    /// each IRI and label is held once however many tools link to it.
    #[schema(value_type = String)]
    pub iri: Arc<str>,
    #[schema(value_type = String)]
    pub label: Arc<str>,
    pub provenance: Provenance,
    /// 1.0 for curated links; extracted links carry the extractor's weight.
    pub weight: f32,
}

/// What kind of span the extractor recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MentionKind {
    /// A verb label or synonym ("book", "make a reservation").
    Verb,
    /// An entity class label or synonym ("flight", "restaurant").
    Entity,
    /// A named instance: brand, provider ("Southwest" -> Airline).
    Brand,
    /// A capitalised name not in the ontology ("Denver"), kept as a place/name candidate.
    ProperNoun,
    FlightNumber,
    Time,
    Date,
    Duration,
    Money,
    Currency,
    Quantity,
    Email,
    Url,
    Phone,
    Quoted,
}

/// An ontology node a mention resolves to, with a weight in (0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Resolved {
    pub iri: String,
    pub weight: f32,
}

/// A recognised span of the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Mention {
    /// Byte offsets into the input, `text[start..end] == surface`.
    pub start: usize,
    pub end: usize,
    pub kind: MentionKind,
    pub surface: String,
    /// Normalised value: lemma for terms, `20:00` for times, `USD 300` for money,
    /// `2026-12-01` or `tomorrow` for dates, `175` for flight numbers.
    pub value: String,
    /// Ontology nodes this mention is evidence for (possibly several).
    pub iris: Vec<Resolved>,
}

/// A tool in the catalog snapshot, with its constellation flattened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Tool {
    pub iri: String,
    pub id: String,
    pub name: String,
    pub description: String,
    /// See [`ToolDescriptor::model_description`].
    pub model_description: String,
    pub params: Vec<Param>,
    pub verbs: Vec<Link>,
    pub entities: Vec<Link>,
    pub domains: Vec<Link>,
    pub categories: Vec<Link>,
    /// Integrations it needs (`integ:stripe`): an organization that has not
    /// connected one never sees the tool.
    pub integrations: Vec<Link>,
    /// Channels it is restricted to (none = every channel).
    pub channels: Vec<Link>,
    pub read_only: bool,
    pub universal: bool,
    /// The tools it depends on (by name), with the kind, parameter and
    /// reason when the manifest gave them.
    pub depends_on: Vec<Dependency>,
    /// The source that registered it (a file path as loaded, a manifest
    /// name): what reloading or unloading that source replaces. Shared by
    /// every tool of that source.
    #[serde(default)]
    #[schema(value_type = String)]
    pub source: Arc<str>,
    /// Where a call to it goes (see [`ToolDescriptor::upstream`]); boxed:
    /// most tools have none, and the catalog holds one `Tool` per tool
    /// (inline, memory per tool at 100k went from 9.63 to 9.98 KB).
    #[serde(default)]
    pub upstream: Option<Box<Upstream>>,
}

impl Tool {
    /// Its parameters as a JSON Schema object (what an MCP client or a
    /// planner fills in): each parameter's type and description, the
    /// required ones listed.
    pub fn input_schema(&self) -> serde_json::Value {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for p in &self.params {
            let mut prop = serde_json::Map::new();
            if let Some(ty) = &p.ty {
                let ty = match &**ty {
                    "str" => "string",
                    "int" => "integer",
                    "float" => "number",
                    "bool" => "boolean",
                    "dict" => "object",
                    "list" => "array",
                    other => other,
                };
                prop.insert("type".into(), ty.into());
            }
            if !p.description.is_empty() {
                prop.insert("description".into(), p.description.to_string().into());
            }
            properties.insert(p.name.clone(), prop.into());
            if p.required {
                required.push(serde_json::Value::from(p.name.clone()));
            }
        }
        serde_json::json!({"type": "object", "properties": properties, "required": required})
    }
}

/// What kind of ontology node a lexicon label names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TermKind {
    /// A `tg:Verb` (`verb:book`).
    Verb,
    /// A `tg:Entity` class (`ent:Flight`).
    Entity,
    /// A named `tg:Instance` of an entity class (`brand:southwest`).
    Instance {
        /// IRI of the instance's class (`ent:Airline`).
        class: String,
    },
}

/// One label (or synonym) of an ontology node: what the extractor matches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LexEntry {
    pub label: String,
    pub iri: String,
    pub kind: TermKind,
    /// Declared only by the constellation builder (minted from some tool's
    /// text), not by curated Turtle: what such a node is called is shown
    /// only to callers who may see a tool it leads to.
    pub minted: bool,
}

/// An open-vocabulary node the constellation builder mints (`term:invoice`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewTerm {
    pub iri: String,
    pub label: String,
    /// Ontology classes the term is a kind of (`term:stock_price` -> `ent:Price`).
    pub broader: Vec<String>,
}

/// A tool linked to the ontology: what the store writes for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Constellation {
    pub descriptor: ToolDescriptor,
    /// `vocab::tool_iri(&descriptor.id)`.
    pub iri: String,
    pub verbs: Vec<Link>,
    pub entities: Vec<Link>,
    pub domains: Vec<Link>,
    /// Open-vocabulary entity nodes to create (`vocab::TERM` + lemma).
    pub new_terms: Vec<NewTerm>,
    /// Verb nodes minted from common English verbs the ontology lacks
    /// (`vocab::VERB` + lemma); `broader` is empty.
    pub new_verbs: Vec<NewTerm>,
    pub read_only: bool,
    /// Descriptor ids this tool depends on.
    pub depends_on: Vec<Dependency>,
    /// What the builder had to decide for itself (a verb minted from the
    /// name, …): reported with the load, never silent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One fact of the caller policy as the store holds it: a property of a
/// platform, organization, agent, profile, agent subtype, goal or intent
/// node. Classes and properties are full IRIs (`tg:Agent`, `tg:memberOf`).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
pub struct PolicyFact {
    pub subject: String,
    pub class: String,
    pub property: String,
    /// An IRI or a literal's text.
    pub value: String,
    /// Why, for reified entries (`tg:blocks [ tg:tool …; tg:reason … ]`).
    pub reason: Option<String>,
}

/// A seed-constraint violation found by a `queries/validate/*.rq` query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Violation {
    /// The rule: the query's file stem (`tool_without_verb`).
    pub rule: String,
    /// The offending node.
    pub subject: String,
    pub message: String,
    /// Where the files say it (`seeds/goals.ttl:42`), when validation had
    /// the files: the line naming the bad reference, else the subject's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(at) = &self.location {
            write!(f, "{at}: ")?;
        }
        write!(f, "{}: {} [{}]", self.subject, self.message, self.rule)
    }
}
