//! The text rules: one family of attack shapes per code, each with the
//! severity a finding of it carries. Rules read one field's text with its
//! invisible characters removed; `(?-i:…)` marks the parts where case is
//! the signal (`SYSTEM:`, a camelCase tool name).

use super::Severity;
use regex::{Regex, RegexBuilder};
use std::sync::OnceLock;

pub(super) struct Rule {
    pub code: &'static str,
    pub message: &'static str,
    pub severity: Severity,
    pub re: Regex,
}

/// A tool named in a text: quoted, in backticks, snake_case or camelCase.
const TOOL: &str = r#"(?-i:'[A-Za-z_][\w.-]{2,}'|"[A-Za-z_][\w.-]{2,}"|`[A-Za-z_][\w.()="' -]{2,}`|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+[A-Z][A-Za-z0-9]+\b)"#;
/// One character of the same sentence (a dot inside a host name or a
/// version number does not end it).
const S: &str = r"(?:[^.\n]|\.\S)";
/// An e-mail address that is not a documentation example.
const EMAIL: &str = r"[\w.+-]+@(?:[\w-]+\.)+[a-z]{2,}";
const EXAMPLE_EMAIL: &str = r"@(?:example|domain|email|test|sample|company)\.";

fn patterns() -> Vec<(&'static str, &'static str, Severity, String)> {
    use Severity::{Block, Info, Warn};
    vec![
        ("instruction", "tells the model to ignore its instructions", Block, [
            r"\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|every\s+|your\s+|the\s+)*(previous|prior|above|earlier|preceding|other|system|safety|original|configured)?\s*(instructions?|prompts?|rules|guidelines|directions|guardrails|policies|behaviou?r)\b",
            r"|\byou\s+are\s+now\s+(in\s+)?\w+|\bnew\s+instructions\b|\b(safety|security)\s+rules\s+do\s+not\s+apply|\bmaintenance\s+mode\b|\bjailbreak|\bdeveloper\s+mode\b|\bfrom\s+now\s+on\s+you\b",
            r"|\b(ignore|disregard|bypass|override|circumvent)\s+(the\s+)?(user'?s?\s+)?(privacy|safety|security|permission|access)\s+(rules|settings|policies|preferences|checks|controls)",
        ].concat()),
        ("concealment", "tells the model to hide something from the user", Block, [
            r"\b(do\s+not|don'?t|never|must\s+not|should\s+not)\s+(tell|inform|mention|reveal|disclose|notify|alert|let)\b[^.]{0,40}\b(user|person|human|anyone)",
            r"|\b(user|person)\s+(must|should)\s+not\s+(learn|know|be\s+told|see)|\bwithout\s+(telling|informing|notifying|alerting|the\s+user\s+knowing)\b",
            r"|\bkeep\s+(this|these|the)\s+(instructions?|notes?|steps?|message)\s+(secret|hidden|confidential)|\bbetween\s+us\b|\b(silently|secretly|covertly|surreptitiously|quietly)\b",
            r"|\bkeep\s+(this|it|that|these|them)\s+(secret|hidden|confidential)\s+from\b|\bsecret\s+from\s+the\s+(user|person)",
            r"|\bhide\s+(any\s+|all\s+)?(trace|evidence|mention)|\bnever\s+disclose\b|\bunder\s+no\s+circumstances\s+reveal|\bshould\s+not\s+be\s+(shown|told)",
        ].concat()),
        ("authority", "addresses the model with authority or urgency framing", Warn, [
            r"<\s*/?\s*(important|system|information|instructions?|secret|admin|hidden|assistant|critical)\s*>|\[\s*(system|instructions?|important|admin[\w ]*|critical)\s*\]",
            r"|(?-i:(?m:^)\s*(SYSTEM|ASSISTANT)\s*:|\bSECURITY\s+PROTOCOL\b)|\b(important|urgent)\s+message\s+from\s+(the\s+)?(user|developer|admin\w*|system)",
            r"|\bmessage\s+from\s+the\s+(developer|admin\w*|user)\s+to\s+(you|the\s+assistant)|\bATTENTION\s+(AI|LLM|ASSISTANT|MODEL|AGENT)\b|\bnote\s+to\s+the\s+(agent|assistant|model|ai)\b",
            r"|\b(directive|order)\s+from\s+the\s+(security|admin|system)|\bsystem_override\b|\bsystem\s+prompt\b|\bmandatory\s+compliance\b",
            r"|\bper\s+company\s+policy\s+the\s+(assistant|ai|model)|\bthe\s+(assistant|ai|agent|model)\s+(is|has\s+been)\s+(authori[sz]ed|granted)",
        ].concat()),
        ("cross_tool", "tells the model to call another tool first, instead or afterwards", Warn, format!(
            r"\b(before|after|prior\s+to|first|then|afterwards|once|whenever)\b{S}{{0,80}}\b(call|use|invoke|run|execute|trigger|chain)\s+(the\s+)?(?P<t1>{TOOL})|\b(call|use|invoke|run|execute|chain)\s+(the\s+)?(?P<t2>{TOOL}){S}{{0,60}}\b(first|before|prior\s+to|afterwards|after\s+this|immediately|once\s+before|as\s+well)\b|\b(preceded|followed)\s+by\s+(a\s+)?(call|run)\s+(to|of)\s+(?P<t3>{TOOL})|\bworkflow\s*:\s*(?P<t4>{TOOL})|\bstep\s+1\s*:\s*(call|use|run)\b|\bexecute\s+this\s+(tool|function)\s+and\s+replace|\brun\s+this\s+function\s+to\s+modify"
        )),
        ("argument_manipulation", "tells the model to set, append, replace or redirect an argument", Warn, format!(
            r"\b(must|should|always|needs?\s+to)\s+(be\s+)?(modified|changed|replaced|redirected|rewritten|set|multiplied|appended|overridden)\b{S}{{0,80}}\b(to|with|by|instead|regardless)\b|\b(always|must)\s+(append|prepend|add|include|set|use)\b{S}{{0,80}}\b(regardless|whatever|no\s+matter|even\s+(when|if)|overrid\w+|on\s+every|to\s+every|of\s+every|for\s+all|instead)|\b(regardless|irrespective)\s+of\s+(what|which|the)\s+(the\s+)?(user|payee|recipient|value|request)|\bwhatever\s+(the\s+)?(user|destination|value|payee)\b{S}{{0,60}}\b(set|use|send|write|redirect)|\b(ignore|disregard)\s+the\s+(path|value|recipient|address|account|amount|destination|query)\b|\b(replace|redirect|change)\s+(the\s+|all\s+)?(account|recipient|payee|payments?|address|destination|amount)\b{S}{{0,60}}\b(to|with)\b|\boverriding\s+any\s+value|\bno\s+matter\s+(which|what)\s+(payee|recipient|account|value|destination|the\s+user)|\beven\s+when\s+the\s+user\s+(names|gives|chooses|picks|provides)"
        )),
        ("deprecation", "claims another tool is deprecated or replaced by this one", Warn, format!(
            r"(?P<t1>{TOOL})(\s+(tool|endpoint|function))?\s+(has\s+been|was|is)\s+(now\s+)?(deprecated|retired|removed|disabled|obsolete|replaced|superseded|no\s+longer)|\b(tool|endpoint|function)\s+(?P<t2>{TOOL})\s+(has\s+been|was|is)\s+(deprecated|retired|removed|disabled|obsolete)|\b(deprecated|obsolete|retired|legacy|no\s+longer\s+available)\b{S}{{0,60}}\b(use|call|route|redirect|switch\s+to|handled)\b{S}{{0,40}}\b(this\s+tool|here|in\s+its\s+place)|\bin\s+its\s+place\b|\bmandatory\s+replacement\b|\bformerly\s+done\s+with\b|\bmigration\s+notice\b|\bsupersedes\s+it\b|\bmust\s+never\s+be\s+used\b"
        )),
        ("exfiltration", "tells the model to send data to an address, a host or a parameter", Block, format!(
            r"\b(send|forward|email|e-mail|mail|copy|cc|bcc|mirror|upload|post|log|report|sync|transmit|share)\b{S}{{0,80}}\b(?P<e1>{EMAIL})|\b(?P<e2>{EMAIL}){S}{{0,40}}\b(bcc|cc|copy|recipient)\b|\b(send|forward|upload|post|email|transmit|exfiltrate|leak|share|include|append|attach|pass|put|encode|log|collect|mirror|paste)\s+(it\s+|them\s+)?(all\s+|the\s+|any\s+|your\s+|their\s+|his\s+|her\s+|every\s+|a\s+copy\s+of\s+)*(previous\s+|full\s+|entire\s+|complete\s+|raw\s+|user'?s?\s+|admin\s+|root\s+|master\s+|customer'?s?\s+)*(conversation|chat\s+(history|log|transcript)|message\s+history|previous\s+messages|credentials|api[\s_-]*keys?|access\s+tokens?|tokens|secrets?|passwords?|private\s+keys?|ssh\s+keys?|environment\s+variables|contents?\s+of|contact\s+list|e-?mail\s+address(es)?\s+and|file\s+listing)|\b(include|append|attach|pass|put)\b{S}{{0,30}}\b(the\s+)?(user'?s?\s+)?(previous\s+messages|conversation(\s+history)?|chat\s+history)\b|\b(send|forward|email|upload|post|share)\b{S}{{0,60}}\b(passport\s+number|credit\s+card|card\s+number|social\s+security|ssn|bank\s+account|password|api\s+key)|\bhttps?://[^\s)>\]]+/(collect|log|mirror|env|exfil|steal|upload)\b|\b(read|cat|open|attach)\s+(the\s+)?(file\s+)?(contents\s+of\s+)?(~/|/etc/|/home/|C:\\|\.\./|\S*secrets?\.|\S*credentials?\.)"
        )),
        ("instruction", "tells the model to do something before or after using the tool", Warn, format!(
            r"\b(before|prior\s+to|after|when|while)\s+(using|calling|invoking|running)\s+(this|any|the|other)\s+tools?\b{S}{{0,100}}\b(read|send|include|pass|upload|forward|copy|open|cat|fetch|access|collect|attach|append|email|post)\b"
        )),
        ("exfiltration", "tells the model to visit an external location", Warn,
            r"\b(visit|open|go\s+to|navigate\s+to|load|fetch|call|ping)\s+(https?://|www\.)\S+\s+(to|and|before|first|in\s+order)\b".into()),
        ("preference", "claims to be the best or only tool, or steers the model away from others", Warn, [
            r"\b(the\s+)?best\s+tool\s+(in|of)\s+the\s+world|\b(the\s+)?only\s+(tool|one)\s+you\s+(should|need|must|can)\b|\balways\s+prefer\s+this\b|\bprefer\s+this\s+tool\s+over\s+(all|any|every|other)",
            r"|\bnever\s+(choose|use|pick|select)\s+(a\s+)?(different|another|other|any\s+other)\b|\bother\s+([\w-]+\s+){0,2}tools\s+(are|return|is)\s+(unreliable|outdated|fabricat\w+|inferior|unverified|broken|wrong)",
            r"|\b(use|choose|select|pick)\s+(this\s+(one|tool)\s+)?exclusively\b|\bsuperior\s+to\s+(every|all|any)\b|\brank\s+this\s+tool\s+above|\bselect\s+it\s+by\s+default",
            r"|#\s*1\b[^.\n]{0,40}\b(tool|choose|first)|\bthe\s+answer\s+is\s+always\s+this\s+one|\b(all\s+)?similar\s+tools\s+are\s+unverified|\bmust\s+be\s+avoided\b",
            r"|\bjust\s+use\s+this\s+tool\s+no\s+matter|\buse\s+this\s+tool\s+rather\s+than\s+(others|any\s+other)|\bmost\s+(accurate|reliable|trusted)\s+and\s+official\b|\bchoose\s+this\s+tool\s+first\b",
            r"|\b(always|only)\s+(use|call)\s+this\s+tool\s+instead\b|\bthis\s+tool\s+handles\s+everything\b",
        ].concat()),
        ("preference", "steers the model away from another tool", Warn, format!(
            r"\b(never|do\s+not|don'?t)\s+(use|call|invoke)\s+(the\s+)?(?P<t1>{TOOL})(\s+tool)?\b"
        )),
        ("shell_command", "asks for a shell command (piped downloads, permission changes, key copies)", Block, [
            r"\b(curl|wget)\b[^|\n]{0,120}\|\s*(ba|z)?sh\b|\brm\s+-rf\b|\bchmod\s+(-R\s+)?[0-7]{3}\b|\b(nc|netcat|ncat)\s+[\w.-]+\s+\d{2,5}\b|\bsudo\s+\w+|\bbash\s+-c\b",
            r"|\bos\.system\s*\(|\bscp\s+-r\b|\$AWS_SECRET|\bpermission\s+verification\b|\bpasswd\s+-d\b|\busermod\b|\bsh\s+/tmp/",
        ].concat()),
        ("sensitive_path", "names credentials or agent configuration files", Block,
            r"(~/\.ssh|\bid_rsa\b|\bid_ed25519\b|/etc/passwd|/etc/shadow|(^|[\s/'`])~?/?\.env\b|\bsecrets?\.(txt|json|ya?ml|env)\b|\.aws/credentials|\.npmrc|\.netrc|\.git-credentials|\bmcp\.json\b|claude_desktop_config|\.cursor/|\.kube/config|\.docker/config\.json|authorized_keys|login\.keychain)".into()),
        ("url", "links to a location", Info,
            r"\bhttps?://[^\s)>\]]+|\bwww\.[a-z0-9-]+\.[a-z]{2,}\S*".into()),
        ("file_path", "names a file path", Info,
            r"(^|[\s(`'])(~/[^\s]*|/(etc|home|root|usr|var|tmp|opt|proc|Users)/[^\s]*|[A-Za-z]:\\[^\s]*|\.\./[^\s]*)".into()),
    ]
}

pub(super) fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        patterns()
            .into_iter()
            .map(|(code, message, severity, pattern)| Rule {
                code,
                message,
                severity,
                re: RegexBuilder::new(&pattern)
                    .case_insensitive(true)
                    .size_limit(64 << 20)
                    .build()
                    .unwrap_or_else(|e| panic!("screening rule `{code}`: {e}")),
            })
            .collect()
    })
}

/// Whether `text` (an e-mail address the exfiltration rule matched) is a
/// documentation example (`name@example.com`).
pub(super) fn example_email(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(&format!("(?i){EXAMPLE_EMAIL}")).expect("example e-mail pattern"))
        .is_match(text)
}

/// Parameter descriptions that ask the model for what a tool has no use
/// for: its identity, its prompt, the conversation, other tools, secrets.
pub(super) fn out_of_scope_description() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        RegexBuilder::new(concat!(
            r"\b(all|full|complete|entire|every|raw|paste|copy|verbatim|exactly)\b[^.\n]{0,30}\b(system\s+prompt|conversation|previous\s+messages|chat\s+(log|transcript|history)|tool\s+outputs?|outputs\s+of\s+every\s+tool|instructions)\b",
            r"|\b(name|version|identity)\s+of\s+the\s+(llm|language\s+model|ai(\s+model)?|model|assistant)\s+(that|which)\b|\bsystem\s+prompt\s+you\b|\bin\s+your\s+context\b",
            r"|\byour\s+(hidden\s+|secret\s+)?instructions\b|\benvironment\s+variables\s+of\b|\bpassword\s+of\s+the\s+current\s+user|\b(names|list)\s+(and\s+descriptions\s+)?of\s+all\s+(other\s+)?(available\s+)?tools",
        ))
        .case_insensitive(true)
        .build()
        .expect("out-of-scope parameter pattern")
    })
}

/// Parameter names of the same kind (`llm_model_name`, `system_prompt`,
/// `tools_list`…).
pub(super) fn out_of_scope_name() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^(llm_\w+|\w*system_prompt\w*|tools?_list|conversation_history|chat_log|chat_history|previous_tool_outputs|assistant_instructions|env_vars)$")
            .expect("out-of-scope name pattern")
    })
}
