//! The email connector on its fixtures, through `levh sync`.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{distinct_sentence, json, levh};

/// The clock every sync here runs at: `past_days` counts back from it.
const NOW: &str = "2026-03-20T12:00:00Z";

fn fixtures() -> PathBuf {
    crate::support::repository_root()
        .join("fixtures")
        .join("email")
}

fn levh_at_now(home: &Path) -> Command {
    let mut command = levh(home);
    command.env("LEVH_NOW", NOW);
    command
}

fn sync(home: &Path, config: &[(&str, String)]) -> Value {
    let mut command = levh_at_now(home);
    command.args(["sync", "email", "--json"]);
    for (key, value) in config {
        command.arg("--config").arg(format!("{key}={value}"));
    }
    json(&mut command)
}

fn errors(report: &Value) -> Vec<String> {
    report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect()
}

fn memories(home: &Path) -> Vec<Value> {
    json(levh_at_now(home).args(["list", "--json", "-n", "500"]))["memories"]
        .as_array()
        .unwrap()
        .clone()
}

fn by_source_id<'a>(memories: &'a [Value], id: &str) -> &'a Value {
    memories
        .iter()
        .find(|m| m["metadata"]["source_id"] == id)
        .unwrap_or_else(|| panic!("no memory for {id}"))
}

#[test]
fn an_mbox_becomes_one_memory_per_message_without_the_noise() {
    let home = tempfile::tempdir().unwrap();
    let mbox = fixtures().join("inbox.mbox");
    let config = [("mbox_path", mbox.display().to_string())];
    let report = sync(home.path(), &config);
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["admitted"], 8, "{report}");
    assert!(
        errors(&report).is_empty(),
        "the no-reply mail is no error: {report}"
    );
    assert_eq!(report["failed"], 0);

    let memories = memories(home.path());
    assert_eq!(memories.len(), 8);
    // The draft has no Date header: its mbox postmark dates it (#17: it was dropped).
    assert_eq!(
        by_source_id(&memories, "draft-offsite-agenda@example.com")["valid_from"],
        "2026-03-10T18:30:00Z"
    );
    assert!(memories.iter().all(|m| m["kind"] == "email"));
    assert!(
        memories
            .iter()
            .all(|m| !m["content"].as_str().unwrap().contains("Build #4812")),
        "mail from no-reply@ is skipped"
    );

    let reply = by_source_id(&memories, "re-atlas-budget-1@example.com");
    assert_eq!(
        reply["valid_from"], "2026-03-09T15:05:00Z",
        "world time from the Date header, in UTC"
    );
    let content = reply["content"].as_str().unwrap();
    assert!(
        content.starts_with(
            "Re: Atlas budget review moved to Thursday\n\n\
             From: Grace Hopper <grace@example.com>\n\
             To: Ada Lovelace <ada@example.com>\n\
             Cc: Linus Pauling <linus@example.org>\n\
             Date: 2026-03-09T15:05:00Z\n"
        ),
        "{content}"
    );
    assert!(content.contains("I will bring the three vendor quotes"));
    let people = &reply["metadata"]["people"];
    assert_eq!(people[0]["name"], "Grace Hopper");
    assert_eq!(people[0]["role"], "sender");
    assert_eq!(people[1]["email"], "ada@example.com");
    assert_eq!(people[1]["role"], "recipient");
    assert_eq!(people[2]["role"], "cc");
    assert_eq!(
        reply["metadata"]["in_reply_to"],
        "atlas-budget-1@example.com"
    );
    assert_eq!(reply["metadata"]["thread"], "atlas-budget-1@example.com");
    assert!(
        reply["metadata"]["source_uri"]
            .as_str()
            .unwrap()
            .ends_with("inbox.mbox#7")
    );

    let encoded = by_source_id(&memories, "seminaire-lyon@example.fr");
    let content = encoded["content"].as_str().unwrap();
    assert!(
        content.starts_with(
            "Café ☕ planning — Q2 offsite\n\nFrom: Renée Dupré <renee@example.fr>\nTo: Zoë Ångström <zoe@example.se>\n"
        ),
        "RFC 2047 headers decoded: {content}"
    );
    assert!(
        content.contains("salle Béatrice"),
        "latin-1 body: {content}"
    );

    let contract = by_source_id(&memories, "contract-signed@example.org");
    assert_eq!(
        contract["metadata"]["attachments"],
        serde_json::json!(["vendor-contract-signed.pdf"])
    );
    assert!(
        contract["content"]
            .as_str()
            .unwrap()
            .contains("the “final” version, with the € 4,200 monthly cap")
    );
    let digest = by_source_id(&memories, "digest-2026-10@atlas.example");
    assert_eq!(digest["metadata"]["has_html"], true);
    assert!(
        digest["content"].as_str().unwrap().contains(
            "Three items are still open before the Atlas launch on 24 March:\n\
                 - Load test the search API at 2× peak\n\
                 - Sign the vendor contract — Linus\n\
                 - Publish the status page & on-call rota\n"
        ),
        "HTML turned into text, entities decoded inside the component too: {digest}"
    );

    let again = sync(home.path(), &config);
    assert_eq!(
        (
            again["admitted"].as_u64(),
            again["unchanged"].as_u64(),
            again["failed"].as_u64()
        ),
        (Some(0), Some(8), Some(0)),
        "{again}"
    );
    let hits = json(levh_at_now(home.path()).args([
        "recall",
        "who brings the vendor quotes to the budget review",
        "--json",
    ]));
    assert!(
        hits["results"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Atlas budget review"),
        "{hits}"
    );
}

#[test]
fn an_eml_directory_stores_the_good_files_and_reports_each_bad_one_once() {
    let home = tempfile::tempdir().unwrap();
    let config = [("eml_dir", fixtures().join("eml").display().to_string())];
    let report = sync(home.path(), &config);
    assert_eq!(report["status"], "ok", "{report}");
    // truncated.eml is cut off before its closing boundary: kept as far as it goes (#17).
    assert_eq!(report["admitted"], 3, "{report}");
    let errors = errors(&report);
    assert_eq!(errors.len(), 2, "{errors:?}");
    for (file, words) in [
        ("empty.eml", "empty file"),
        ("garbage.eml", "not an email: no headers"),
    ] {
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{file}: ")) && e.contains(words)),
            "{file}: {errors:?}"
        );
    }
    let memories = memories(home.path());
    let kickoff = by_source_id(&memories, "kickoff-2026@example.com");
    assert_eq!(kickoff["valid_from"], "2026-03-10T08:00:00Z");
    assert!(
        kickoff["content"]
            .as_str()
            .unwrap()
            .contains("Monday 16 March at 10:00")
    );
    assert_eq!(kickoff["metadata"]["people"][1]["name"], "Atlas Team");
    let parking = memories
        .iter()
        .find(|m| {
            m["metadata"]["source_id"]
                .as_str()
                .unwrap()
                .starts_with("no-message-id:")
        })
        .expect("a message without Message-ID gets a stable id");
    assert!(
        parking["content"]
            .as_str()
            .unwrap()
            .contains("20 parking spaces")
    );
    let slides = by_source_id(&memories, "slides-q1@example.com");
    assert_eq!(
        slides["metadata"]["incomplete"],
        "multipart boundary \"q1-slides-boundary\" never closes"
    );
    assert_eq!(
        slides["metadata"]["attachments"],
        serde_json::json!(["q1-review.pptx"])
    );

    let again = sync(home.path(), &config);
    assert_eq!(
        (again["admitted"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(3)),
        "{again}"
    );
}

#[test]
fn legacy_charsets_decode_in_headers_as_in_bodies() {
    let home = tempfile::tempdir().unwrap();
    let mbox = fixtures().join("charsets.mbox");
    let report = sync(home.path(), &[("mbox_path", mbox.display().to_string())]);
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(
        (report["failed"].as_u64(), errors(&report).len()),
        (Some(0), 0),
        "{report}"
    );
    let memories = memories(home.path());
    for (id, subject, sender, body) in [
        // GB2312 encoded words over a UTF-8 body: the headers were U+FFFD (#17)
        (
            "gb2312-subject@example.cn",
            "阿特拉斯项目周报",
            "李伟",
            "本周阿特拉斯项目完成了搜索接口的压力测试。",
        ),
        (
            "gbk-quotes@example.cn",
            "供应商报价",
            "张敏",
            "供应商报价已经收到，请在周四前确认预算。",
        ),
        (
            "big5-offsite@example.tw",
            "研討會場地確認",
            "陳宇",
            "研討會改在台北舉行。",
        ),
        (
            "sjis-launch@example.jp",
            "ローンチの準備について",
            "佐藤健二",
            "ローンチは三月二十四日です。",
        ),
        (
            "euckr-contract@example.kr",
            "계약서 서명 완료",
            "김지수",
            "계약서에 서명했습니다.",
        ),
        (
            "koi8-budget@example.ru",
            "Бюджет на второй квартал",
            "Иван Петров",
            "Бюджет утверждён до апреля.",
        ),
        (
            "cp1250-travel@example.cz",
            "Cestovní příkaz – Brno",
            "Jan Novák",
            "Cestovní příkaz pro cestu do Brna je schválen.",
        ),
    ] {
        let content = by_source_id(&memories, id)["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            content.starts_with(&format!("{subject}\n\nFrom: {sender} <")),
            "{id}: {content}"
        );
        assert!(
            content.contains(&format!("\nSubject: {subject}\n")),
            "{id}: {content}"
        );
        assert!(content.ends_with(body), "{id}: {content}");
        assert!(!content.contains('\u{fffd}'), "{id}: {content}");
    }
}

#[test]
fn damaged_mime_keeps_what_is_there_prefers_the_plain_part_and_hides_the_html_head() {
    let home = tempfile::tempdir().unwrap();
    let config = [("eml_dir", fixtures().join("damaged").display().to_string())];
    let report = sync(home.path(), &config);
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(
        (report["admitted"].as_u64(), report["failed"].as_u64()),
        (Some(3), Some(0)),
        "{report}"
    );
    assert!(errors(&report).is_empty(), "{report}");
    let memories = memories(home.path());
    let content = |id: &str| {
        by_source_id(&memories, id)["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // Cut off inside its last part: was one error line, the whole message lost.
    let notes = by_source_id(&memories, "vendor-call-notes@example.org");
    assert_eq!(
        notes["metadata"]["incomplete"],
        "multipart boundary \"notes-outer\" never closes"
    );
    assert!(
        content("vendor-call-notes@example.org").ends_with(
            "Subject: Vendor call notes\n\n\
             Ada, my notes from the vendor call are below.\n\n\
             The vendor agreed to a € 3,900 cap for the first year. Delivery of the racks slips to"
        ),
        "{notes}"
    );

    // The plain part's separator line holds a space: its text was read as headers and
    // the HTML, title glued on, stored instead.
    let weekly = content("atlas-weekly-12@example.com");
    assert!(
        weekly.ends_with(
            "Subject: Atlas weekly, week 12\n\nThe search API passed its load test at twice the peak."
        ),
        "{weekly}"
    );

    // HTML only, an unclosed <HEAD> with attributes: no title, style or script text.
    let invite = content("offsite-invite@example.se");
    assert!(
        invite.ends_with(
            "Subject: Offsite invitation\n\nThe offsite is at the lake house on 2 April."
        ),
        "{invite}"
    );
    for hidden in ["Invitation", "font-family", "track()"] {
        assert!(!invite.contains(hidden), "{hidden}: {invite}");
    }
}

#[test]
fn past_days_skips_old_mail_and_the_skips_are_logged_not_failed() {
    let home = tempfile::tempdir().unwrap();
    let out = levh_at_now(home.path())
        .env("LEVH_LOG", "info")
        .args(["sync", "email", "--json", "--config"])
        .arg(format!(
            "mbox_path={}",
            fixtures().join("inbox.mbox").display()
        ))
        .args(["--config", "past_days=30"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (report["admitted"].as_u64(), report["failed"].as_u64()),
        (Some(7), Some(0)),
        "the November 2025 mail is older than 30 days before {NOW}: {report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    for words in [
        "skipped 1 messages from excluded senders",
        "skipped 1 messages older than 30 days",
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.contains(words) && l.contains("plugin=\"email\"")),
            "{words}: {stderr}"
        );
    }
}

#[test]
fn every_message_the_connector_skips_is_named_in_the_report_with_why() {
    let home = tempfile::tempdir().unwrap();
    let mbox = fixtures().join("inbox.mbox");
    let report = sync(
        home.path(),
        &[
            ("mbox_path", mbox.display().to_string()),
            ("past_days", "30".into()),
        ],
    );
    assert_eq!(report["skipped"], 2, "{report}");
    let skipped = crate::support::not_stored_as(&report, "skipped");
    assert_eq!(skipped.len(), 2, "{report}");
    assert!(
        skipped
            .iter()
            .any(|(_, why)| why.contains("which exclude_senders") && why.contains("no")),
        "the no-reply sender and the pattern that matched it: {skipped:?}"
    );
    assert!(
        skipped
            .iter()
            .any(|(_, why)| why.starts_with("dated 2025-11-")
                && why.ends_with("older than past_days (30 days)")),
        "the old mail and its date: {skipped:?}"
    );
    assert!(skipped.iter().all(|(id, _)| !id.is_empty()), "{skipped:?}");
    // `levh sync status RUN` names them again later.
    let run = report["run_id"].as_str().unwrap();
    let status = json(levh_at_now(home.path()).args(["sync", "status", run, "--json"]));
    let again = status.to_string();
    assert!(again.contains("older than past_days (30 days)"), "{again}");
}

#[test]
fn config_mistakes_fail_the_sync_naming_the_key() {
    let home = tempfile::tempdir().unwrap();
    let mbox = fixtures().join("inbox.mbox");
    let dir = fixtures().join("eml");
    for (config, words) in [
        (
            vec![
                format!("mbox_path={}", mbox.display()),
                format!("eml_dir={}", dir.display()),
            ],
            "`mbox_path` and `eml_dir`",
        ),
        (
            vec![
                format!("mbox_path={}", mbox.display()),
                "max_messages=lots".to_owned(),
            ],
            "`max_messages` must be a whole number",
        ),
        (vec!["past_days=3".to_owned()], "set one of `mbox_path`"),
    ] {
        let mut command = levh_at_now(home.path());
        command.args(["sync", "email", "--json"]);
        for pair in &config {
            command.args(["--config", pair]);
        }
        let out = command.output().unwrap();
        assert!(!out.status.success(), "{config:?}");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(all.contains(words), "{config:?}: {all}");
        assert!(all.contains("invalid-config"), "{config:?}: {all}");
    }
}

#[test]
fn a_mailbox_larger_than_a_page_is_stored_whole_and_once() {
    const MESSAGES: u64 = 1_200;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.mbox");
    write_mbox(&path, 0..MESSAGES);

    let home = tempfile::tempdir().unwrap();
    let config = [("mbox_path", path.display().to_string())];
    let report = sync(home.path(), &config);
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(
        (
            report["admitted"].as_u64(),
            report["failed"].as_u64(),
            report["pages"].as_u64()
        ),
        (Some(MESSAGES), Some(0), Some(3)),
        "500 messages a page: {report}"
    );
    let stats = json(levh_at_now(home.path()).args(["stats", "--json"]));
    assert_eq!(stats["total"], MESSAGES, "{stats}");
    let mut ids = HashSet::new();
    for offset in [0, 500, 1000] {
        let page = json(levh_at_now(home.path()).args([
            "list",
            "--json",
            "-n",
            "500",
            "--offset",
            &offset.to_string(),
        ]));
        for memory in page["memories"].as_array().unwrap() {
            ids.insert(memory["metadata"]["source_id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(ids.len() as u64, MESSAGES, "each message stored once");

    let again = sync(home.path(), &config);
    assert_eq!(
        (again["admitted"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(MESSAGES)),
        "{again}"
    );
}

/// An mbox of distinct messages numbered `range`.
fn write_mbox(path: &Path, range: std::ops::Range<u64>) {
    let mut mbox = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for n in range {
        let day = 1 + n % 28;
        write!(
            mbox,
            "From person{n}@example.com Sun Feb  1 08:00:00 2026\n\
             Message-ID: <archive-{n}@example.com>\n\
             Date: Sun, {day:02} Feb 2026 08:{:02}:00 +0000\n\
             From: Person {n} <person{n}@example.com>\n\
             To: Ada Lovelace <ada@example.com>\n\
             Subject: Archive note {n}\n\
             \n\
             {}\n\
             {}\n\n",
            n % 60,
            distinct_sentence(n),
            distinct_sentence(n + 100_000),
        )
        .unwrap();
    }
    mbox.into_inner().unwrap().sync_all().unwrap();
}

#[test]
fn two_mailboxes_synced_in_turn_each_resume_where_they_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let (work, home_box) = (dir.path().join("work.mbox"), dir.path().join("home.mbox"));
    write_mbox(&work, 0..4);
    write_mbox(&home_box, 10..14);
    let home = tempfile::tempdir().unwrap();
    // Two messages per run: each mailbox needs two runs, and they alternate.
    let config = |path: &Path| {
        [
            ("mbox_path", path.display().to_string()),
            ("max_messages", "2".to_owned()),
        ]
    };
    let admitted = |report: Value| (report["admitted"].as_u64(), report["unchanged"].as_u64());
    assert_eq!(
        admitted(sync(home.path(), &config(&work))),
        (Some(2), Some(0))
    );
    assert_eq!(
        admitted(sync(home.path(), &config(&home_box))),
        (Some(2), Some(0))
    );
    // With one cursor per connector, the home mailbox's cursor would send the work
    // mailbox back to its start: two unchanged messages, nothing new, for ever.
    assert_eq!(
        admitted(sync(home.path(), &config(&work))),
        (Some(2), Some(0)),
        "the work mailbox resumed after its first two messages"
    );
    assert_eq!(
        admitted(sync(home.path(), &config(&home_box))),
        (Some(2), Some(0))
    );
    let stats = json(levh_at_now(home.path()).args(["stats", "--json"]));
    assert_eq!(stats["total"], 8, "{stats}");
}

#[test]
fn a_message_without_a_date_takes_a_relay_or_postmark_date_and_an_outlook_msg_is_named() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mbox = dir.path().join("old.mbox");
    std::fs::write(
        &mbox,
        "From ada@example.com Wed Mar 18 09:30:00 2026\n\
         From: Ada <ada@example.com>\nSubject: Budget without a date\n\nThe budget is frozen until April.\n\n\
         From grace@example.com Thu Mar 19 10:00:00 2026\n\
         From: Grace <grace@example.com>\n\
         Received: from mx.example.com by mail.example.org; Thu, 19 Mar 2026 11:15:00 +0000\n\
         Subject: Relayed without a date\n\nThe offsite moves to the lake house.\n",
    )
    .unwrap();
    let report = sync(home.path(), &[("mbox_path", mbox.display().to_string())]);
    assert_eq!(
        (&report["admitted"], &report["failed"]),
        (&serde_json::json!(2), &serde_json::json!(0)),
        "{report}"
    );
    let stored = memories(home.path());
    let valid_from = |needle: &str| {
        stored
            .iter()
            .find(|m| m["content"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("{needle} not stored"))["valid_from"]
            .clone()
    };
    assert_eq!(valid_from("frozen until April"), "2026-03-18T09:30:00Z");
    assert_eq!(valid_from("lake house"), "2026-03-19T11:15:00Z");

    let msg = dir.path().join("minutes.msg");
    let mut bytes = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
    bytes.extend(std::iter::repeat_n(0u8, 1024));
    std::fs::write(&msg, bytes).unwrap();
    let report = sync(home.path(), &[("eml_path", msg.display().to_string())]);
    let errors = errors(&report);
    assert!(
        errors.iter().any(|e| e.contains("Outlook message (.msg)")),
        "{errors:?}"
    );
}

#[test]
fn a_saved_message_with_no_date_of_its_own_is_dated_by_its_file() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let eml = dir.path().join("undated.eml");
    std::fs::write(
        &eml,
        "From: Ada <ada@example.com>\nTo: Grace <grace@example.com>\nSubject: Kestrel pump order\n\nThe pump order goes out on Friday.\n",
    )
    .unwrap();
    std::fs::File::options()
        .write(true)
        .open(&eml)
        .unwrap()
        .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_773_835_200))
        .unwrap();
    let report = sync(home.path(), &[("eml_path", eml.display().to_string())]);
    assert_eq!(
        (&report["admitted"], &report["failed"]),
        (&serde_json::json!(1), &serde_json::json!(0)),
        "no Date, no Received: the file's time, not a dropped message: {report}"
    );
    let stored = memories(home.path());
    assert_eq!(
        stored[0]["valid_from"], "2026-03-18T12:00:00Z",
        "{stored:?}"
    );
}

#[test]
fn a_sync_killed_mid_run_leaves_whole_pages_only_and_a_rerun_completes_it() {
    const MESSAGES: u64 = 3_000;
    const PAGE: u64 = 500;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.mbox");
    write_mbox(&path, 0..MESSAGES);
    let home = tempfile::tempdir().unwrap();
    let config = [("mbox_path", path.display().to_string())];

    let mut child = levh_at_now(home.path())
        .args(["sync", "email", "--config"])
        .arg(format!("mbox_path={}", path.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed (SIGKILL: no clean-up of any kind) as soon as the first page is in the file,
    // while the next pages are being judged and written.
    let db = home.path().join("levh.db");
    let stored = |db: &Path| -> u64 {
        let Ok(connection) = rusqlite::Connection::open(db) else {
            return 0;
        };
        connection
            .query_row(
                "SELECT count(*) FROM memories WHERE source = 'connector:email'",
                [],
                |row| row.get::<_, i64>(0),
            )
            .map_or(0, |n| n as u64)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while stored(&db) == 0 {
        assert!(std::time::Instant::now() < deadline, "no page stored");
        assert!(child.try_wait().unwrap().is_none(), "the sync ended early");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let connection = rusqlite::Connection::open(&db).unwrap();
    let count = |sql: &str| -> u64 {
        connection
            .query_row(sql, [], |row| row.get::<_, i64>(0))
            .unwrap() as u64
    };
    let memories = count("SELECT count(*) FROM memories WHERE source = 'connector:email'");
    assert!(
        memories < MESSAGES,
        "killed before the end ({memories} stored)"
    );
    assert_eq!(memories % PAGE, 0, "whole pages only: {memories} memories");
    assert_eq!(
        count(
            "SELECT count(*) FROM memories m WHERE source = 'connector:email' AND NOT EXISTS
             (SELECT 1 FROM sync_items s WHERE s.memory_id = m.id)"
        ),
        0,
        "every stored memory has its item record"
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM sync_items s WHERE s.memory_id IS NOT NULL AND NOT EXISTS
             (SELECT 1 FROM memories m WHERE m.id = s.memory_id)"
        ),
        0,
        "every item record has its memory"
    );
    assert_eq!(
        count("SELECT count(*) FROM memory_embeddings"),
        memories,
        "every memory has its vector, no vector is left without its memory"
    );
    drop(connection);

    let rerun = sync(home.path(), &config);
    assert_eq!(rerun["status"], "ok", "{rerun}");
    assert_eq!(
        (
            rerun["admitted"].as_u64(),
            rerun["rejected"].as_u64(),
            rerun["failed"].as_u64()
        ),
        (Some(MESSAGES - memories), Some(0), Some(0)),
        "the re-run stores the rest and nothing twice: {rerun}"
    );
    let stats = json(levh_at_now(home.path()).args(["stats", "--json"]));
    assert_eq!(stats["total"], MESSAGES, "{stats}");
}

/// A folder of `.eml` files is a full listing: a message whose file was deleted is retired
/// and named in the report, the others untouched; a second sync changes nothing.
#[test]
fn a_deleted_eml_file_is_retired_at_the_next_sync() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mail = |name: &str, id: &str, subject: &str, body: &str| {
        std::fs::write(
            dir.path().join(name),
            format!(
                "Message-ID: <{id}@example.com>\r\nDate: Tue, 10 Mar 2026 09:00:00 +0100\r\nFrom: Ada Lovelace <ada@example.com>\r\nTo: Grace Hopper <grace@example.com>\r\nSubject: {subject}\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n{body}\r\n"
            ),
        )
        .unwrap();
    };
    mail(
        "a.eml",
        "budget",
        "Budget review",
        "The budget review moves to the big room on Friday.",
    );
    mail(
        "b.eml",
        "offsite",
        "Offsite",
        "The offsite is in Lisbon in May; flights are booked.",
    );
    mail(
        "c.eml",
        "hiring",
        "Hiring",
        "We hire two firmware engineers this quarter.",
    );
    let config = [("eml_dir", dir.path().display().to_string())];
    let first = sync(home.path(), &config);
    assert_eq!(first["admitted"], 3, "{first}");
    std::fs::remove_file(dir.path().join("b.eml")).unwrap();
    let second = sync(home.path(), &config);
    assert_eq!(
        (second["retired"].as_u64(), second["unchanged"].as_u64()),
        (Some(1), Some(2)),
        "{second}"
    );
    let left = json(levh(home.path()).args(["list", "--json"]));
    let texts = left["memories"].to_string();
    assert!(
        !texts.contains("Lisbon") && texts.contains("firmware"),
        "{texts}"
    );
    let third = sync(home.path(), &config);
    assert_eq!(third["retired"].as_u64(), Some(0), "{third}");
}
