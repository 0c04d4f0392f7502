//! `levh share` / `levh pull` between two homes through the real binary: a project goes
//! from instance A to instance B as a signed, encrypted file and arrives through B's own
//! gate with its provenance; a second or overlapping pull imports nothing twice; a bundle
//! changed by one byte, signed by a stranger or made for someone else is refused with
//! what failed, and nothing is imported.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use crate::support::{json, levh};

const NOW: &str = "2026-12-01T09:00:00Z";

/// B already has this; A shares a near copy of it (held at B).
const MAIN: &str = "The deploy branch for atlas is main.";
const PROD: &str = "The deploy branch for atlas is prod.";
/// Both have this: a duplicate at B.
const SAME: &str = "Atlas keeps its main database on PostgreSQL 17 in Frankfurt.";
/// Only A has this: imported at B.
const NEW: &str = "The atlas on-call rotation changes every Monday at nine.";

fn at(home: &Path) -> Command {
    let mut command = levh(home);
    command.env("LEVH_NOW", NOW).env("LEVH_EMBEDDER", "hash");
    command
}

fn capture(home: &Path, content: &str, project: &str) -> String {
    let out = json(at(home).args(["capture", content, "--project", project, "--json"]));
    assert_eq!(out["verdict"], "admit", "{out}");
    out["memory_id"].as_str().unwrap().to_owned()
}

fn identity(home: &Path) -> String {
    json(at(home).args(["peer", "id", "--json"]))["identity"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn share(home: &Path, args: &[&str]) -> Value {
    json(at(home).arg("share").args(args).arg("--json"))
}

fn pull(home: &Path, file: &Path) -> Value {
    json(at(home).arg("pull").arg(file).arg("--json"))
}

/// A pull that must be refused: its error, and B's memories unchanged.
fn refused(home: &Path, file: &Path) -> String {
    let before = memories(home, None).len();
    let output = at(home).arg("pull").arg(file).output().unwrap();
    assert!(!output.status.success(), "pulled {}", file.display());
    assert_eq!(memories(home, None).len(), before, "nothing is imported");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn memories(home: &Path, project: Option<&str>) -> Vec<Value> {
    let mut command = at(home);
    command.args(["list", "--json", "--limit", "100"]);
    if let Some(project) = project {
        command.args(["--project", project]);
    }
    json(&mut command)["memories"].as_array().unwrap().clone()
}

fn with_content<'m>(memories: &'m [Value], content: &str) -> Option<&'m Value> {
    memories.iter().find(|m| m["content"] == content)
}

fn outcomes(report: &Value) -> [u64; 6] {
    [
        "imported",
        "redacted",
        "held",
        "duplicate",
        "already_pulled",
        "refused",
    ]
    .map(|k| report[k].as_u64().unwrap())
}

#[test]
fn a_project_shared_as_a_file_arrives_once_through_the_receivers_gate_with_its_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (a_id, b_id) = (identity(&a), identity(&b));
    assert!(a_id.starts_with("levh-peer1:"), "{a_id}");
    assert_ne!(a_id, b_id);
    assert_eq!(identity(&a), a_id, "created once");
    json(at(&a).args(["peer", "add", "bob", &b_id, "--json"]));
    json(at(&b).args(["peer", "add", "alice", &a_id, "--json"]));

    let new_id = capture(&a, NEW, "atlas");
    capture(&a, SAME, "atlas");
    capture(&a, PROD, "atlas");
    capture(
        &a,
        "Zephyr's launch date stays secret until March.",
        "zephyr",
    );
    capture(&b, MAIN, "atlas");
    capture(&b, SAME, "atlas");

    let bundle = dir.path().join("atlas.bundle");
    let shared = share(
        &a,
        &[
            "--to",
            "bob",
            "--project",
            "atlas",
            "-o",
            bundle.to_str().unwrap(),
        ],
    );
    assert_eq!(
        (shared["count"].as_u64(), &shared["encrypted"]),
        (Some(3), &Value::Bool(true))
    );
    let bytes = std::fs::read(&bundle).unwrap();
    assert!(bytes.starts_with(b"age-encryption.org/v1\n"), "an age file");
    assert!(
        !String::from_utf8_lossy(&bytes).contains("on-call"),
        "no memory readable in the file"
    );

    let pulled = pull(&b, &bundle);
    assert_eq!(outcomes(&pulled), [1, 0, 1, 1, 0, 0], "{pulled}");
    assert_eq!(pulled["from"], "alice");
    let atlas = memories(&b, Some("atlas"));
    let arrived = with_content(&atlas, NEW).expect("the new memory arrived");
    assert_eq!(arrived["id"], new_id.as_str(), "its id is kept");
    assert_eq!(arrived["source"], "peer:alice");
    let from = &arrived["metadata"]["shared_from"];
    assert_eq!(from["memory_id"], new_id.as_str());
    assert_eq!(from["peer"], "alice");
    let a_key = json(at(&a).args(["peer", "id", "--json"]))["key"].clone();
    assert_eq!(from["instance"], a_key);
    assert_eq!(from["shared_at"], shared["created_at"]);
    assert!(
        with_content(&atlas, PROD).is_none(),
        "the near copy is held, not stored"
    );
    let held = json(at(&b).args(["held", "list", "--json"]))["held"].clone();
    assert_eq!(held.as_array().unwrap().len(), 1, "{held}");
    assert!(
        memories(&b, None)
            .iter()
            .all(|m| !m["content"].as_str().unwrap().contains("Zephyr")),
        "another project is not shared"
    );

    // The same bundle again: nothing new, the memory known by its id.
    let again = pull(&b, &bundle);
    let [imported, redacted, held_again, _, already, _] = outcomes(&again);
    assert_eq!(
        (imported, redacted, held_again, already),
        (0, 0, 0, 1),
        "{again}"
    );
    let item = again["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["memory_id"] == new_id.as_str())
        .unwrap();
    assert_eq!(item["outcome"], "already_pulled", "{item}");

    // An overlapping bundle: only the memory B has not seen arrives.
    let later = capture(
        &a,
        "The atlas status page moved to status.atlas.example.",
        "atlas",
    );
    let overlap = dir.path().join("overlap.bundle");
    share(
        &a,
        &[
            "--to",
            "bob",
            "--project",
            "atlas",
            "-o",
            overlap.to_str().unwrap(),
        ],
    );
    let pulled = pull(&b, &overlap);
    assert_eq!(pulled["imported"], 1, "{pulled}");
    assert_eq!(pulled["already_pulled"], 1, "{pulled}");
    assert!(
        with_content(
            &memories(&b, Some("atlas")),
            "The atlas status page moved to status.atlas.example."
        )
        .is_some_and(|m| m["id"] == later.as_str())
    );
    assert_eq!(
        memories(&b, Some("atlas")).len(),
        4,
        "MAIN, SAME, NEW and the status page: each once"
    );

    // A file that is not written over, and a share of nothing, say so.
    let output = at(&a)
        .args(["share", "--to", "bob", "--project", "atlas", "-o"])
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("exists"));
    let output = at(&a)
        .args(["share", "--to", "bob", "--project", "nothing-here", "-o"])
        .arg(dir.path().join("empty.bundle"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("no live memory matches"));
    let output = at(&a)
        .args(["share", "--to", "nobody", "-o"])
        .arg(dir.path().join("nobody.bundle"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("no peer named \"nobody\""));
}

#[test]
fn a_changed_a_strangers_or_someone_elses_bundle_is_refused_naming_what_failed() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let (a_id, b_id, c_id) = (identity(&a), identity(&b), identity(&c));
    json(at(&a).args(["peer", "add", "bob", &b_id, "--json"]));
    json(at(&a).args(["peer", "add", "carol", &c_id, "--json"]));
    json(at(&b).args(["peer", "add", "alice", &a_id, "--json"]));
    json(at(&c).args(["peer", "add", "bob", &b_id, "--json"]));
    capture(&a, NEW, "atlas");
    capture(&c, SAME, "atlas");
    let file = |name: &str| dir.path().join(name);
    let write = |home: &Path, to: &str, name: &str, plain: bool| {
        let path = file(name);
        let mut args = vec!["--to", to, "-o", path.to_str().unwrap()];
        if plain {
            args.push("--no-encrypt");
        }
        share(home, &args);
        path
    };

    // One byte changed inside the signed text of a plain bundle.
    let plain = write(&a, "bob", "plain.bundle", true);
    let text = std::fs::read_to_string(&plain).unwrap();
    assert!(text.starts_with("levh-share-bundle/1 "), "{text}");
    std::fs::write(
        file("changed.bundle"),
        text.replacen("on-call", "on-cell", 1),
    )
    .unwrap();
    let error = refused(&b, &file("changed.bundle"));
    assert!(
        error.contains("signature does not match") && error.contains("alice"),
        "{error}"
    );
    // One byte changed in an encrypted one.
    let sealed = write(&a, "bob", "sealed.bundle", false);
    let mut bytes = std::fs::read(&sealed).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(file("sealed-changed.bundle"), bytes).unwrap();
    let error = refused(&b, &file("sealed-changed.bundle"));
    assert!(error.contains("encryption does not open"), "{error}");

    // Signed by an instance B never added.
    let stranger = write(&c, "bob", "stranger.bundle", false);
    let error = refused(&b, &stranger);
    let c_key = json(at(&c).args(["peer", "id", "--json"]))["key"].clone();
    assert!(
        error.contains("no peer of this instance") && error.contains(c_key.as_str().unwrap()),
        "{error}"
    );

    // Made by a known peer for another instance: encrypted, and plain.
    let error = refused(&b, &write(&a, "carol", "for-carol.bundle", false));
    assert!(error.contains("encrypted for another instance"), "{error}");
    let error = refused(&b, &write(&a, "carol", "for-carol-plain.bundle", true));
    assert!(error.contains("made it for another instance"), "{error}");

    // Not a bundle at all.
    std::fs::write(file("notes.txt"), "just some notes\n").unwrap();
    let error = refused(&b, &file("notes.txt"));
    assert!(error.contains("not a levh share bundle"), "{error}");

    // A removed peer is a stranger again.
    json(at(&b).args(["peer", "remove", "alice", "--json"]));
    let error = refused(&b, &sealed);
    assert!(error.contains("no peer of this instance"), "{error}");
    assert!(pull_ok_after_adding_back(&b, &a_id, &sealed));
}

fn pull_ok_after_adding_back(b: &Path, a_id: &str, bundle: &Path) -> bool {
    json(at(b).args(["peer", "add", "alice", a_id, "--json"]));
    pull(b, bundle)["imported"] == 1
}

/// A peer's own gate is not trusted: a memory holding a secret — as an older or a
/// modified levh could send, properly signed — is redacted by the receiver's gate.
#[test]
fn a_secret_in_a_signed_bundle_is_redacted_by_the_receivers_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (a_id, b_id) = (identity(&a), identity(&b));
    json(at(&a).args(["peer", "add", "bob", &b_id, "--json"]));
    json(at(&b).args(["peer", "add", "alice", &a_id, "--json"]));
    capture(
        &a,
        "The vault admin login is kept in the team manager.",
        "vault",
    );
    let plain = dir.path().join("vault.bundle");
    share(
        &a,
        &["--to", "bob", "--no-encrypt", "-o", plain.to_str().unwrap()],
    );

    // Rewritten and signed again with A's own key, as A's modified levh would.
    let text = std::fs::read_to_string(&plain).unwrap();
    let (_, payload) = text.split_once('\n').unwrap();
    let payload = payload.replace(
        "is kept in the team manager.",
        "uses password=CorrectHorse9 for now.",
    );
    let keys = std::fs::read_to_string(a.join("share/identity.toml")).unwrap();
    let seed = keys
        .lines()
        .find_map(|l| l.strip_prefix("signing_key = \""))
        .unwrap()
        .trim_end_matches('"');
    let seed: [u8; 32] = URL_SAFE_NO_PAD.decode(seed).unwrap().try_into().unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    let signature = ed25519_dalek::Signer::sign(
        &key,
        &[
            b"levh-share-bundle/1 signed payload\n".as_slice(),
            payload.as_bytes(),
        ]
        .concat(),
    );
    let forged = format!(
        "levh-share-bundle/1 {} {}\n{payload}",
        URL_SAFE_NO_PAD.encode(key.verifying_key().to_bytes()),
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    );
    let secret = dir.path().join("secret.bundle");
    std::fs::write(&secret, forged).unwrap();

    let pulled = pull(&b, &secret);
    assert_eq!(pulled["redacted"], 1, "{pulled}");
    let stored = memories(&b, Some("vault"));
    let content = stored[0]["content"].as_str().unwrap();
    assert!(
        content.contains("[REDACTED:password]") && !content.contains("CorrectHorse9"),
        "{content}"
    );
}

/// Over HTTP: B pulls from A's `levh serve` with the token A granted it. That token
/// fetches bundles of the granted project and nothing else — no capture, no list, no
/// other project — and without it the route answers 401.
#[test]
fn a_peer_pulls_over_http_with_its_token_which_can_do_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (a_id, b_id) = (identity(&a), identity(&b));
    json(at(&a).args(["peer", "add", "bob", &b_id, "--json"]));
    let new_id = capture(&a, NEW, "atlas");
    capture(
        &a,
        "Zephyr's launch date stays secret until March.",
        "zephyr",
    );
    let granted = json(at(&a).args(["peer", "grant", "bob", "--project", "atlas", "--json"]));
    let token = granted["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("levh_share_"), "{granted}");
    let listed = json(at(&a).args(["peer", "list", "--json"]));
    assert!(
        !listed.to_string().contains(&token),
        "the token is never listed"
    );

    let (mut server, address) =
        crate::support::serve(&a, &[("LEVH_NOW", NOW), ("LEVH_EMBEDDER", "hash")]);
    let url = format!("http://{address}");
    json(at(&b).args([
        "peer", "add", "alice", &a_id, "--url", &url, "--token", &token, "--json",
    ]));

    let pulled = json(at(&b).args(["pull", "alice", "--json"]));
    assert_eq!(
        (pulled["imported"].as_u64(), &pulled["encrypted"]),
        (Some(1), &Value::Bool(true)),
        "{pulled}"
    );
    let arrived = memories(&b, Some("atlas"));
    assert_eq!(arrived[0]["id"], new_id.as_str());
    assert_eq!(arrived[0]["source"], "peer:alice");
    let again = json(at(&b).args(["pull", "alice", "--shared", "atlas", "--json"]));
    assert_eq!(
        (again["imported"].as_u64(), again["already_pulled"].as_u64()),
        (Some(0), Some(1)),
        "{again}"
    );

    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let bearer = format!("Bearer {token}");
    let status = |response: Result<ureq::http::Response<ureq::Body>, ureq::Error>| {
        let mut response = response.unwrap();
        let body = response.body_mut().read_to_string().unwrap_or_default();
        (response.status().as_u16(), body)
    };
    let (code, body) = status(
        agent
            .post(format!("{url}/api/memories"))
            .header("Authorization", &bearer)
            .header("Content-Type", "application/json")
            .send(r#"{"content": "a peer writing into this instance"}"#),
    );
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("only fetches bundles"), "{body}");
    let (code, _) = status(
        agent
            .get(format!("{url}/api/memories"))
            .header("Authorization", &bearer)
            .call(),
    );
    assert_eq!(code, 403, "a share token lists nothing");
    let (code, _) = status(
        agent
            .get(format!("{url}/api/stats"))
            .header("Authorization", &bearer)
            .call(),
    );
    assert_eq!(code, 403, "nor reads what the dashboard reads");
    let (code, body) = status(
        agent
            .get(format!("{url}/api/share/bundle?project=zephyr"))
            .header("Authorization", &bearer)
            .call(),
    );
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains(r#"may not pull project \"zephyr\""#),
        "{body}"
    );
    assert!(!body.contains("Zephyr's"), "{body}");
    let (code, body) = status(
        agent
            .get(format!("{url}/api/share/bundle?project=atlas"))
            .call(),
    );
    assert_eq!(code, 401, "no token: {body}");
    let (code, _) = status(
        agent
            .get(format!("{url}/api/share/bundle"))
            .header("Authorization", "Bearer levh_share_not-a-granted-token")
            .call(),
    );
    assert_eq!(code, 401, "an unknown share token");
    assert_eq!(memories(&a, None).len(), 2, "nothing was written into A");

    // Granting again replaces the token: the old one stops working.
    json(at(&a).args(["peer", "grant", "bob", "--project", "atlas", "--json"]));
    let output = at(&b).args(["pull", "alice"]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refused: 401"), "{stderr}");
    server.kill().unwrap();
    server.wait().unwrap();
}
