//! Secret detection and redaction, table-driven.
//!
//! Why hand-written: the one Rust library aimed at exactly this (`redact-secret`) is a
//! pre-release beta, and general scanners are CLIs, not libraries. So this is a table of
//! well-known token shapes (most are documented prefixes with fixed alphabets), each with
//! a test that it is caught and near-misses that it is not. A secret is replaced by
//! `[REDACTED:<kind>]`; for `key=value`-style kinds only the value is replaced, so the text
//! still says what was there. E-mail addresses are deliberately kept.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// One kind of secret and how to find it.
struct Rule {
    kind: &'static str,
    pattern: &'static str,
}

/// Rules, most specific first: an earlier rule's redaction hides its text from later ones
/// (so `sk-ant-…` is an Anthropic key, not an OpenAI one). Where a rule has a capture group
/// named `secret`, only that group is replaced. Token shapes with a distinctive prefix are
/// matched wherever they start, not only at a word boundary: `key_AKIA…` or `x_ghp_…` is a
/// secret behind a prefix (`_` is a word character, so `\b` missed it).
const RULES: &[Rule] = &[
    Rule {
        kind: "private-key",
        // To its END line; a key pasted without one (cut short, or its END lost) to the
        // end of its body: whole lines of base64 and the `Proc-Type`/`DEK-Info` headers
        // (a following line of prose is not swallowed).
        // Indented lines and a body joined by spaces onto the BEGIN line (pasted into a
        // chat or a YAML value) are a key body too.
        pattern: r"(?mR)-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|(?:[ \t]+[A-Za-z0-9+/=]{8,})*(?:\s*^[ \t]*(?:[A-Za-z0-9+/=]{8,}(?:[ \t]+[A-Za-z0-9+/=]{8,})*|Proc-Type:[^\r\n]*|DEK-Info:[^\r\n]*)[ \t]*$)*)",
    },
    Rule {
        kind: "aws-access-key-id",
        pattern: r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
    },
    Rule {
        kind: "aws-secret-access-key",
        pattern: r#"(?i)(?:\b|_)aws_?secret_?(?:access_?)?key\b["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})\b"#,
    },
    Rule {
        kind: "github-token",
        pattern: r"gh[pousr]_[A-Za-z0-9]{36,251}\b",
    },
    Rule {
        kind: "github-fine-grained-token",
        pattern: r"github_pat_[A-Za-z0-9_]{50,255}\b",
    },
    Rule {
        kind: "gitlab-token",
        pattern: r"gl(?:pat|dt|ptt|rt|cbt|ft|imt|agent|oas)-[A-Za-z0-9_-]{20,}",
    },
    Rule {
        kind: "slack-token",
        pattern: r"xox[abposre]-[A-Za-z0-9-]{10,}",
    },
    Rule {
        kind: "slack-webhook",
        pattern: r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
    },
    Rule {
        kind: "discord-webhook",
        pattern: r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,}",
    },
    Rule {
        kind: "stripe-key",
        pattern: r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
    },
    Rule {
        kind: "anthropic-key",
        pattern: r"sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{20,}",
    },
    Rule {
        kind: "openai-key",
        pattern: r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|sk-[A-Za-z0-9]{48}\b",
    },
    Rule {
        kind: "google-api-key",
        pattern: r"AIza[0-9A-Za-z_-]{35}\b",
    },
    Rule {
        kind: "google-oauth-secret",
        pattern: r"GOCSPX-[A-Za-z0-9_-]{28}\b",
    },
    Rule {
        kind: "huggingface-token",
        pattern: r"hf_[A-Za-z0-9]{34,40}\b",
    },
    Rule {
        kind: "npm-token",
        pattern: r"npm_[A-Za-z0-9]{36}\b",
    },
    Rule {
        kind: "pypi-token",
        pattern: r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
    },
    Rule {
        kind: "sendgrid-key",
        pattern: r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
    },
    Rule {
        kind: "twilio-key",
        pattern: r"\bSK[0-9a-f]{32}\b",
    },
    Rule {
        kind: "digitalocean-token",
        pattern: r"do[opr]_v1_[a-f0-9]{64}\b",
    },
    Rule {
        kind: "shopify-token",
        pattern: r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
    },
    Rule {
        kind: "telegram-bot-token",
        pattern: r"\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}\b",
    },
    Rule {
        kind: "azure-storage-key",
        pattern: r"(?i)\bAccountKey=(?P<secret>[A-Za-z0-9+/]{86}==)",
    },
    Rule {
        kind: "jwt",
        pattern: r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    },
    Rule {
        kind: "bearer-token",
        pattern: r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)",
    },
    Rule {
        kind: "basic-auth",
        pattern: r"(?i)\bauthorization:\s*basic\s+(?P<secret>[A-Za-z0-9+/]{12,}=*)",
    },
    Rule {
        kind: "url-password",
        // The password runs to the authority's last `@` (an unescaped `@` in a password
        // is common), never past the path, query or fragment.
        pattern: r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s/?#]+)@",
    },
    Rule {
        kind: "password",
        pattern: r#"(?i)(?:\b|_)(?:password|passwd|passphrase|pwd|pass|secret|client_secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b["']?\s*[:=]\s*["']?(?P<secret>[^\s"',;]{4,})"#,
    },
];

static COMPILED: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    RULES
        .iter()
        // The table is a constant checked by the tests below; a bad pattern is a bug.
        .map(|rule| {
            (
                rule.kind,
                Regex::new(rule.pattern).unwrap_or_else(|e| panic!("rule {}: {e}", rule.kind)),
            )
        })
        .collect()
});

/// One secret found and replaced. Never carries the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redaction {
    /// Its kind, e.g. `github-token`.
    pub kind: String,
}

/// The kinds of secret levh recognises.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|rule| rule.kind)
}

fn marker(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// `text` with every recognised secret replaced, and what was replaced (in rule order).
pub fn redact(text: &str) -> (String, Vec<Redaction>) {
    let mut current = text.to_owned();
    let mut found = Vec::new();
    for (kind, regex) in COMPILED.iter() {
        let mut count = 0usize;
        let replaced = regex.replace_all(&current, |caps: &regex::Captures<'_>| {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            // Our own markers are never secrets (keeps redaction idempotent).
            if whole.contains("[REDACTED:") {
                return whole.to_owned();
            }
            count += 1;
            match (caps.get(0), caps.name("secret")) {
                (Some(all), Some(secret)) => {
                    let start = secret.start() - all.start();
                    let end = secret.end() - all.start();
                    format!("{}{}{}", &whole[..start], marker(kind), &whole[end..])
                }
                _ => marker(kind),
            }
        });
        if count > 0 {
            current = replaced.into_owned();
            found.extend(std::iter::repeat_n(
                Redaction {
                    kind: (*kind).to_owned(),
                },
                count,
            ));
        }
    }
    (current, found)
}

/// A JSON value with every string redacted, object keys included (a key is stored and
/// listed like a value). A string under a key that names a secret (`"password": "…"`) is
/// judged with its key, as `key=value` would be in text, so a bare value is not missed
/// for want of context.
pub fn redact_json(value: &serde_json::Value) -> (serde_json::Value, Vec<Redaction>) {
    let mut found = Vec::new();
    let redacted = redact_value(value, None, &mut found);
    (redacted, found)
}

fn redact_value(
    value: &serde_json::Value,
    key: Option<&str>,
    found: &mut Vec<Redaction>,
) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            if let Some(key) = key {
                let probe = format!("{key}={text}");
                let (redacted, with_key) = redact(&probe);
                if let Some(rest) = redacted.strip_prefix(&format!("{key}="))
                    && !with_key.is_empty()
                {
                    found.extend(with_key);
                    return Value::String(rest.to_owned());
                }
            }
            let (redacted, kinds) = redact(text);
            found.extend(kinds);
            Value::String(redacted)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| redact_value(item, key, found))
                .collect(),
        ),
        Value::Object(map) => {
            let mut redacted = serde_json::Map::new();
            for (k, v) in map {
                let value = redact_value(v, Some(k), found);
                let (base, kinds) = redact(k);
                found.extend(kinds);
                // Two keys that redact alike stay two entries.
                let mut key = base.clone();
                let mut n = 2;
                while redacted.contains_key(&key) {
                    key = format!("{base} #{n}");
                    n += 1;
                }
                redacted.insert(key, value);
            }
            Value::Object(redacted)
        }
        other => other.clone(),
    }
}

/// A source id as levh keeps and reports it: as the connector gave it, unless it holds a
/// secret (a file named after a token, a Message-ID with a key in it) — then redacted, with
/// a digest of the original after it so that two such ids stay two items from one run to
/// the next. The digest cannot give the secret back: a token has far more entropy than 64
/// bits, so no search through candidates finds the one that hashes alike.
pub fn kept_source_id(id: &str) -> String {
    let (redacted, found) = redact(id);
    if found.is_empty() {
        return id.to_owned();
    }
    format!(
        "{redacted}#{:016x}",
        xxhash_rust::xxh3::xxh3_64(id.as_bytes())
    )
}

/// The kinds of secret present in `text` (without changing it).
pub fn detect(text: &str) -> Vec<Redaction> {
    redact(text).1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One made-up example per kind, from the fixtures shared with the integration tests.
    fn examples() -> Vec<(String, String)> {
        include_str!("../../../../fixtures/secrets/examples.tsv")
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .map(|line| {
                let (kind, example) = line.split_once('\t').unwrap();
                (kind.to_owned(), example.replace("\\n", "\n"))
            })
            .collect()
    }

    fn near_misses() -> Vec<&'static str> {
        include_str!("../../../../fixtures/secrets/near-misses.txt")
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .collect()
    }

    #[test]
    fn there_are_at_least_twenty_kinds_and_each_compiles() {
        assert!(COMPILED.len() >= 20, "{}", COMPILED.len());
    }

    #[test]
    fn every_kind_has_an_example() {
        let examples: Vec<String> = examples().into_iter().map(|(kind, _)| kind).collect();
        assert_eq!(examples, kinds().collect::<Vec<_>>());
    }

    #[test]
    fn every_kind_is_caught_in_a_sentence_and_replaced_by_its_marker() {
        for (kind, secret) in examples() {
            let kind = kind.as_str();
            let text = format!("Note for later: {secret} (ask Ada).");
            let (redacted, found) = redact(&text);
            assert_eq!(
                found.first().map(|r| r.kind.as_str()),
                Some(kind),
                "{kind}: {redacted}"
            );
            assert!(redacted.contains(&marker(kind)), "{kind}: {redacted}");
            assert!(
                redacted.starts_with("Note for later: ") && redacted.ends_with(" (ask Ada)."),
                "{kind}: {redacted}"
            );
            // nothing of the secret's distinctive body survives
            let body: String = secret
                .chars()
                .rev()
                .take(12)
                .collect::<String>()
                .chars()
                .rev()
                .collect();
            let secret_in_the_middle = ["private-key", "url-password"].contains(&kind);
            assert!(
                !redacted.contains(&body) || secret_in_the_middle,
                "{kind}: {redacted}"
            );
        }
    }

    #[test]
    fn key_value_kinds_keep_the_key() {
        assert_eq!(
            redact("password=CorrectHorse9").0,
            "password=[REDACTED:password]"
        );
        assert_eq!(redact("pwd: s3cr3t-value").0, "pwd: [REDACTED:password]");
        assert_eq!(
            redact("postgres://admin:hunter2pass@db.internal:5432/app").0,
            "postgres://admin:[REDACTED:url-password]@db.internal:5432/app"
        );
    }

    #[test]
    fn a_url_password_with_an_at_sign_is_redacted_whole() {
        assert_eq!(
            redact("postgres://app:p@ss@w0rd@db.internal:5432/app?sslmode=require").0,
            "postgres://app:[REDACTED:url-password]@db.internal:5432/app?sslmode=require"
        );
        // An address in the path or after the URL is not part of the password.
        assert_eq!(
            redact("see https://user:pw1234@host/a@b and mail ada@example.org").0,
            "see https://user:[REDACTED:url-password]@host/a@b and mail ada@example.org"
        );
    }

    #[test]
    fn a_private_key_without_its_end_line_is_redacted_to_the_end_of_its_body() {
        let body = "MIIEowIBAAKCAQEAvL3q9Zr0d1mQ8YkRkzX4\nc2VjcmV0LWtleS1ib2R5LWxpbmUtdHdv";
        let text = format!(
            "pasted: -----BEGIN RSA PRIVATE KEY-----\n{body}\n\nAfterwards the notes go on."
        );
        let (redacted, found) = redact(&text);
        assert_eq!(found.len(), 1, "{redacted}");
        assert_eq!(
            redacted,
            "pasted: [REDACTED:private-key]\n\nAfterwards the notes go on."
        );
        let encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D\n\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0B";
        assert_eq!(redact(encrypted).0, "[REDACTED:private-key]");
    }

    #[test]
    fn json_strings_are_redacted_at_any_depth_and_judged_with_their_key() {
        let value = serde_json::json!({
            "title": "Standup",
            "password": "hunter2secret",
            "links": ["postgres://app:pw1234@db/x", 3],
            "nested": { "note": "secret: abcd1234efgh", "api_key": "k3y-V4lue" },
        });
        let (redacted, found) = redact_json(&value);
        assert_eq!(
            redacted,
            serde_json::json!({
                "title": "Standup",
                "password": "[REDACTED:password]",
                "links": ["postgres://app:[REDACTED:url-password]@db/x", 3],
                "nested": { "note": "secret: [REDACTED:password]", "api_key": "[REDACTED:password]" },
            })
        );
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(redact_json(&redacted).1, Vec::new());
    }

    #[test]
    fn redaction_is_idempotent() {
        let (once, _) = redact(&format!(
            "token: {} and ghp_{}",
            "abcd1234efgh",
            "x".repeat(36)
        ));
        let (twice, again) = redact(&once);
        assert_eq!(once, twice);
        assert!(again.is_empty(), "{again:?}");
    }

    #[test]
    fn near_misses_are_kept() {
        for text in near_misses() {
            let (redacted, found) = redact(text);
            assert!(found.is_empty(), "{text:?} → {found:?}");
            assert_eq!(redacted, text);
        }
    }

    /// Behind a prefix that `\b` did not see (`_` and letters are word characters).
    #[test]
    fn tokens_behind_a_word_prefix_and_keywords_behind_an_underscore_are_caught() {
        let token = format!("ghp_{}", "Ab3".repeat(12));
        for (text, kind) in [
            ("key_AKIAQ4EXAMPLEKEY7ZZQ".to_owned(), "aws-access-key-id"),
            (format!("x_{token}"), "github-token"),
            (format!("MY{token}"), "github-token"),
            ("db_password=hunter22x".to_owned(), "password"),
            (
                "PROD_AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".to_owned(),
                "aws-secret-access-key",
            ),
        ] {
            let (redacted, found) = redact(&text);
            assert_eq!(
                found.first().map(|r| r.kind.as_str()),
                Some(kind),
                "{text}: {redacted}"
            );
            assert!(redacted.contains(&marker(kind)), "{redacted}");
        }
    }

    /// A private key indented (a YAML value, a quoted mail) or joined by spaces onto its
    /// BEGIN line (a chat paste), without its END line: the body goes with the BEGIN line,
    /// and prose after it stays.
    #[test]
    fn an_indented_or_space_joined_private_key_without_its_end_loses_its_body() {
        let indented = "key:\n  -----BEGIN RSA PRIVATE KEY-----\n  MIIEowIBAAKCAQEAu1SU1LfVLPHC\n  VTLw7onLRnrq0IzW7yWR7Qkrm\nThanks, rotate it soon.";
        let (redacted, found) = redact(indented);
        assert_eq!(found.len(), 1, "{redacted}");
        assert_eq!(
            redacted,
            "key:\n  [REDACTED:private-key]\nThanks, rotate it soon."
        );
        let joined = "paste: -----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA AAAAMwAAAAtzc2gtZWQy";
        let (redacted, _) = redact(joined);
        assert_eq!(redacted, "paste: [REDACTED:private-key]");
    }

    /// A metadata key is stored and listed like a value.
    #[test]
    fn secrets_in_metadata_keys_are_redacted_and_two_such_keys_stay_two() {
        let token = format!("ghp_{}", "Cd4".repeat(12));
        let other = format!("ghp_{}", "Ef5".repeat(12));
        let (redacted, found) = redact_json(&serde_json::json!({
            (format!("token {token}")): "a",
            (format!("token {other}")): "b",
            "plain": "c",
        }));
        assert_eq!(found.len(), 2);
        let text = redacted.to_string();
        assert!(!text.contains(&token) && !text.contains(&other), "{text}");
        assert_eq!(redacted.as_object().unwrap().len(), 3, "{text}");
    }

    #[test]
    fn a_source_id_keeps_a_digest_beside_its_redacted_secret_and_plain_ids_stay() {
        let token = format!("ghp_{}", "Gh6".repeat(12));
        let kept = kept_source_id(&format!("file:creds-{token}.md"));
        assert!(!kept.contains(&token), "{kept}");
        assert!(
            kept.starts_with("file:creds-[REDACTED:github-token].md#"),
            "{kept}"
        );
        assert_eq!(kept_source_id(&kept), kept, "idempotent");
        let other = kept_source_id(&format!("file:creds-ghp_{}.md", "Ij7".repeat(12)));
        assert_ne!(kept, other, "two secrets stay two items");
        assert_eq!(kept_source_id("file:notes.md"), "file:notes.md");
    }
}
