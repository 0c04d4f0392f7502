//! The dashboard as `levh serve` serves it, over real HTTP on 127.0.0.1: every page path
//! answers with the shell, the files it names are served with their types and a strict
//! content security policy, no page or file needs a token while the API still does, and
//! the Host guard covers the pages too.

use fantoccini::Locator;
use fantoccini::key::Key;
use levh_mcp::tokio;

use crate::browser::Browser;
use crate::support::serve;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// Status, content type, content security policy and body of a GET.
fn fetch(url: &str, host: Option<&str>) -> (u16, String, String, String) {
    let mut request = agent().get(url);
    if let Some(host) = host {
        request = request.header("Host", host);
    }
    let mut response = request.call().unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (kind, policy) = (header("content-type"), header("content-security-policy"));
    let body = response.body_mut().read_to_string().unwrap_or_default();
    (response.status().as_u16(), kind, policy, body)
}

#[test]
fn every_page_is_the_shell_its_files_are_served_and_only_the_api_needs_the_token() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = serve(home.path(), &[("LEVH_TOKEN", "operator-secret-1234567890")]);
    let base = format!("http://{address}");

    for page in [
        "/",
        "/feed",
        "/search",
        "/memories",
        "/memories/019d0b1d-de00-79c8-89b3-af2d00d9814b",
        "/projects",
        "/sessions",
        "/fading",
        "/review",
        "/held",
        "/decisions",
        "/people",
        "/people/019d0b1d-de00-79c8-89b3-af2d00d9814b",
        "/entities/019d0b1d-de00-79c8-89b3-af2d00d9814b",
        "/organizations",
        "/timeline",
        "/graph",
        "/connectors",
        "/settings",
    ] {
        let (status, kind, policy, body) = fetch(&format!("{base}{page}"), None);
        assert_eq!(status, 200, "{page}");
        assert!(kind.starts_with("text/html"), "{page}: {kind}");
        assert!(policy.contains("default-src 'self'"), "{page}: {policy}");
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{page}: {policy}"
        );
        assert!(
            body.contains("<script type=\"module\" src=\"/assets/app.js\">"),
            "{page}"
        );
    }
    // Every file the shell and the scripts name is served, with its type.
    for (file, wanted) in [
        ("app.js", "text/javascript"),
        ("api.js", "text/javascript"),
        ("pages.js", "text/javascript"),
        ("style.css", "text/css"),
        ("vendor/uplot/uPlot.iife.min.js", "text/javascript"),
        ("vendor/uplot/uPlot.min.css", "text/css"),
    ] {
        let (status, kind, _, body) = fetch(&format!("{base}/assets/{file}"), None);
        assert_eq!(status, 200, "{file}");
        assert!(kind.starts_with(wanted), "{file}: {kind}");
        assert!(!body.is_empty(), "{file}");
    }
    let (status, _, _, body) = fetch(&format!("{base}/assets/../../etc/passwd"), None);
    assert_ne!(status, 200, "{body}");
    let (status, _, _, body) = fetch(&format!("{base}/assets/secret.js"), None);
    assert_eq!(status, 404, "{body}");

    // The pages hold no data: the API behind them still wants the token.
    let (status, _, _, body) = fetch(&format!("{base}/api/stats"), None);
    assert_eq!(status, 401, "{body}");
    // A page asked for under a foreign Host is refused like the API (DNS rebinding).
    let (status, _, _, body) = fetch(&format!("{base}/"), Some("evil.example"));
    assert_eq!(status, 403, "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}

const OPERATOR: &str = "operator-secret-1234567890";
const MAIN: &str = "The deploy branch for atlas is main.";
const PROD: &str = "The deploy branch for atlas is prod.";

/// Where the test run leaves its screenshots (not committed): `target/tmp/dashboard/`.
fn screenshots() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard")
}

/// `levh capture TEXT --json` in `home`, as a person in a terminal would.
fn capture(home: &std::path::Path, text: &str) -> serde_json::Value {
    crate::support::json(crate::support::levh(home).args(["capture", text, "--json"]))
}

/// The main element's text once its heading is `title`.
async fn page(browser: &Browser, url: &str, title: &str) -> String {
    browser.client.goto(url).await.unwrap();
    browser
        .until(
            &format!("the page {title:?} at {url}"),
            &format!(
                "const h = document.querySelector('main h1'); return h && h.textContent === {title:?}"
            ),
        )
        .await;
    browser.text("main").await
}

/// The main element's text once its heading starts with `prefix` (pages named by their
/// content: "Briefing for 2026-12-07").
async fn page_starting(browser: &Browser, url: &str, prefix: &str) -> String {
    browser.client.goto(url).await.unwrap();
    browser
        .until(
            &format!("a page {prefix:?}… at {url}"),
            &format!(
                "const h = document.querySelector('main h1'); return h && h.textContent.startsWith({prefix:?})"
            ),
        )
        .await;
    browser.text("main").await
}

/// axe-core's violations on the page, as a list to report (none when axe is missing).
async fn accessibility(browser: &Browser, path: &str, theme: &str, found: &mut Vec<String>) {
    if let Some(violations) = browser.axe_violations().await {
        found.extend(
            violations
                .into_iter()
                .map(|v| format!("{path} ({theme}): {v}")),
        );
    }
}

/// Ctrl-K, as a person presses it.
fn ctrl_k() -> fantoccini::actions::KeyActions {
    use fantoccini::actions::{InputSource, KeyAction, KeyActions};
    KeyActions::new("palette".into())
        .then(KeyAction::Down {
            value: char::from(Key::Control),
        })
        .then(KeyAction::Down { value: 'k' })
        .then(KeyAction::Up { value: 'k' })
        .then(KeyAction::Up {
            value: char::from(Key::Control),
        })
}

/// The capture form opened from the command palette, by the keyboard alone.
async fn capture_from_palette(browser: &Browser) {
    browser.client.perform_actions(ctrl_k()).await.unwrap();
    browser
        .until(
            "the palette",
            "return document.getElementById('palette').open",
        )
        .await;
    browser
        .client
        .active_element()
        .await
        .unwrap()
        .send_keys("capture")
        .await
        .unwrap();
    browser
        .until("Capture offered", "return document.querySelector('#palette [aria-selected=true]')?.textContent.includes('Capture')")
        .await;
    browser.press(Key::Enter).await;
    browser
        .until(
            "the capture form, from the palette",
            "return document.getElementById('capture').open",
        )
        .await;
    assert_eq!(browser.focused().await, "TEXTAREA");
}

/// Types `text` where the focus is (the form's Content), then Tab to Capture and Enter.
async fn submit_by_keyboard(browser: &Browser, text: &str) {
    browser
        .client
        .active_element()
        .await
        .unwrap()
        .send_keys(text)
        .await
        .unwrap();
    for _ in 0..20 {
        browser.press(Key::Tab).await;
        if browser.focused().await == "BUTTON \"Capture\"" {
            break;
        }
    }
    assert_eq!(browser.focused().await, "BUTTON \"Capture\"");
    browser.press(Key::Enter).await;
}

/// One broad walk through the dashboard in a real headless Chromium against a real
/// `levh serve` that wants a token, with a second `levh` process writing beside it: the
/// token prompt; the live feed; a search's breakdown; reinforce on a memory's page; a held
/// candidate admitted from the queue (recorded as the dashboard's); every page at 1280 and
/// 390 px without a console error or a sideways scroll; and a viewer token that sees no
/// write button.
#[test]
fn in_a_real_browser_a_person_reviews_recalls_and_decides_and_a_viewer_only_reads() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let first = capture(home, MAIN);
    let first_id = first["memory_id"].as_str().unwrap().to_owned();
    let (mut server, address) = serve(home, &[("LEVH_TOKEN", OPERATOR), ("LEVH_EMBEDDER", "hash")]);
    let base = format!("http://{address}");
    let shots = screenshots();

    crate::support::runtime().block_on(async {
        let Some(browser) = Browser::start(1280).await else {
            return;
        };

        // A token-protected server without a token shows the prompt; the only console
        // error is the 401 that made it ask.
        browser.client.goto(&base).await.unwrap();
        browser
            .until("the token prompt", "return document.getElementById('token').open")
            .await;
        browser.screenshot(&shots.join("1280"), "token-prompt").await;
        let errors = browser.console_errors().await;
        assert!(
            !errors.is_empty() && errors.iter().all(|m| m.contains("401")),
            "{errors:#?}"
        );
        // A wrong token first: said so, with a way to try again (no reload).
        let input = browser
            .client
            .find(Locator::Css("#token input"))
            .await
            .unwrap();
        input.send_keys("not-the-token-at-all").await.unwrap();
        browser.client.find(Locator::Css("#token button")).await.unwrap().click().await.unwrap();
        browser
            .until("the refusal, with a way to try again", "return document.querySelector('main .error')?.textContent.startsWith('The token was not accepted')")
            .await;
        browser.click_button("Enter another token").await;
        browser.until("the prompt, asked again", "return document.getElementById('token').open").await;
        // The refused tries are the only console errors: 401s.
        let errors = browser.console_errors().await;
        assert!(errors.iter().all(|m| m.contains("401")), "{errors:#?}");
        let input = browser
            .client
            .find(Locator::Css("#token input"))
            .await
            .unwrap();
        input.clear().await.unwrap();
        input.send_keys(OPERATOR).await.unwrap();
        browser
            .client
            .find(Locator::Css("#token button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        browser
            .until(
                "the home page after the token",
                "return document.querySelector('main h1')?.textContent === 'Home'",
            )
            .await;
        browser.assert_no_console_error("/ after the token").await;
        // Home's retention chart: the one memory, just captured, in the top tenth.
        let chart = browser
            .until("the retention chart", "return document.querySelector('main .bars[role=img]')?.getAttribute('aria-label')")
            .await;
        assert!(chart.as_str().unwrap().contains("90–100%: 1") && chart.as_str().unwrap().contains("0–10%: 0"), "{chart}");

        // Quick capture from any page, by its key: the gate's verdict in place, with a
        // link; the same text again is refused naming the memory it duplicates. The
        // memory list shows what was captured, newest first.
        browser.type_char('c').await;
        browser
            .until("the capture form, opened by its key", "return document.getElementById('capture').open")
            .await;
        assert_eq!(browser.focused().await, "TEXTAREA", "the form opens on its Content field");
        let typed = "The release train leaves every second Tuesday at noon.";
        browser.client.active_element().await.unwrap().send_keys(typed).await.unwrap();
        browser.client.find(Locator::Css("#capture button[value=capture]")).await.unwrap().click().await.unwrap();
        let told = browser
            .until("the verdict in place", "const s = document.querySelector('#capture [role=status]'); return s.textContent.startsWith('Stored') && s.querySelector('a')?.getAttribute('href')")
            .await;
        assert!(told.as_str().unwrap().starts_with("/memories/"), "{told}");
        browser.client.find(Locator::Css("#capture textarea")).await.unwrap().send_keys(typed).await.unwrap();
        browser.client.find(Locator::Css("#capture button[value=capture]")).await.unwrap().click().await.unwrap();
        browser
            .until("a duplicate refused, naming it", "const s = document.querySelector('#capture [role=status]'); return s.textContent.startsWith('Not stored: duplicate of') && !!s.querySelector('a')")
            .await;
        browser.client.find(Locator::Css("#capture button[value=cancel]")).await.unwrap().click().await.unwrap();
        // Capture from the command palette, by the keyboard alone, with the gate's other
        // verdicts said in place: a near copy held for a person (a link to the queue), a
        // secret redacted (what kind). The form has the fields a memory has, validity too.
        capture_from_palette(&browser).await;
        let fields = browser
            .client
            .execute("return [...document.querySelectorAll('#capture [name]')].map(e => e.name).join(',')", vec![])
            .await
            .unwrap();
        assert_eq!(fields, "content,project,importance,pin,valid_from,valid_to");
        submit_by_keyboard(&browser, "The release train leaves every second Tuesday at nine.").await;
        browser
            .until("held, in place", "const s = document.querySelector('#capture [role=status]'); return s.textContent.startsWith(\"Held for a person's review\") && s.querySelector('a[href=\"/held\"]')")
            .await;
        // Let go of it here, so the queue later holds only what the walk puts there.
        let waiting = crate::support::json(crate::support::levh(home).args(["held", "list", "--json"]));
        let waiting = waiting["held"][0]["id"].as_str().unwrap().to_owned();
        crate::support::ok(crate::support::levh(home).args(["held", "discard", &waiting]));
        browser.client.find(Locator::Css("#capture textarea")).await.unwrap().click().await.unwrap();
        submit_by_keyboard(&browser, "The atlas deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789 for the CI runner.").await;
        let redacted = browser
            .until("redacted, in place", "const s = document.querySelector('#capture [role=status]'); return s.textContent.startsWith('Stored with') && s.textContent")
            .await;
        assert!(redacted.as_str().unwrap().contains("redacted"), "{redacted}");
        browser.press(Key::Escape).await;
        page(&browser, &format!("{base}/memories"), "Memories").await;
        let listed = browser
            .until("the memory list", "const rows = document.querySelectorAll('main tbody tr'); return rows.length >= 3 && [...rows].slice(0, 2).map(r => r.textContent)")
            .await;
        assert!(listed[0].as_str().unwrap().contains("deploy token"), "newest first: {listed}");
        assert!(listed[1].as_str().unwrap().contains("release train"), "newest first: {listed}");
        browser.assert_no_console_error("capture and the memory list").await;
        // Forget from its page says it succeeded (it once reported a failure: the page it
        // redrew was gone) and lands on the list.
        browser.client.goto(&format!("{base}{}", told.as_str().unwrap())).await.unwrap();
        browser.until("the captured memory's page", "return document.querySelector('main h1')?.textContent.startsWith('The release train')").await;
        browser.click_button("Forget").await;
        browser.client.accept_alert().await.unwrap();
        browser
            .until("the list, saying it was forgotten", "return location.pathname === '/memories' && document.querySelector('main [role=status]')?.textContent.startsWith('Forgotten')")
            .await;
        browser.assert_no_console_error("forget from a memory's page").await;
        // The command palette, by the keyboard alone: Ctrl-K, a page by name, Enter; then a
        // memory found by its words.
        browser.client.perform_actions(ctrl_k()).await.unwrap();
        browser.until("the palette", "return document.getElementById('palette').open").await;
        browser.client.active_element().await.unwrap().send_keys("fading").await.unwrap();
        browser
            .until("the page offered", "return document.querySelector('#palette [aria-selected=true]')?.textContent.includes('Go to Fading')")
            .await;
        browser.press(Key::Enter).await;
        browser.until("the Fading page, by the palette", "return document.querySelector('main h1')?.textContent === 'Fading'").await;
        browser.client.perform_actions(ctrl_k()).await.unwrap();
        browser.until("the palette again", "return document.getElementById('palette').open").await;
        browser.client.active_element().await.unwrap().send_keys("deploy branch").await.unwrap();
        browser
            .until("a memory offered by its words", "return [...document.querySelectorAll('#palette [role=option]')].some(o => o.textContent.startsWith('memory'))")
            .await;
        // Its place, counted from 1 (`until` waits for a truthy answer).
        let memory_option = "return 1 + [...document.querySelectorAll('#palette [role=option]')].findIndex(o => o.textContent.startsWith('memory'))";
        let place = browser.until("the memory's place", memory_option).await.as_i64().unwrap();
        for _ in 1..place {
            browser.press(Key::Down).await;
        }
        browser.press(Key::Enter).await;
        browser.until("a memory's page, by the palette", "return location.pathname.startsWith('/memories/')").await;
        browser.assert_no_console_error("the command palette").await;
        page(&browser, &base, "Home").await;

        // The keyboard alone: the skip link comes first and moves the focus to the page;
        // the navigation is next, and a search runs from the keyboard.
        browser.client.refresh().await.unwrap();
        browser
            .until("the home page", "return document.querySelector('main h1')?.textContent === 'Home'")
            .await;
        browser.press(Key::Tab).await;
        assert_eq!(browser.focused().await, "A \"Skip to content\"");
        browser.press(Key::Enter).await;
        assert_eq!(browser.focused().await, "MAIN", "the skip link moves the focus to the page");
        browser.client.refresh().await.unwrap();
        browser
            .until("the home page", "return document.querySelector('main h1')?.textContent === 'Home'")
            .await;
        let mut walk = Vec::new();
        for _ in 0..5 {
            browser.press(Key::Tab).await;
            walk.push(browser.focused().await);
        }
        assert_eq!(walk, ["A \"Skip to content\"", "A \"levh\"", "A \"Home\"", "A \"Feed\"", "A \"Search\""]);
        browser.press(Key::Enter).await;
        browser
            .until("the search page by keyboard", "return document.querySelector('main h1')?.textContent === 'Search'")
            .await;
        // Past the other twenty links of the navigation (Memories … Settings) and the
        // Capture button.
        for _ in 0..22 {
            browser.press(Key::Tab).await;
        }
        assert_eq!(browser.focused().await, "INPUT", "past the navigation, the query field");
        browser.client.active_element().await.unwrap().send_keys("deploy branch").await.unwrap();
        browser.press(Key::Enter).await;
        browser
            .until("results of a search typed at the keyboard", "return document.querySelector('td.terms')")
            .await;
        browser.assert_no_console_error("the keyboard walk").await;

        // The feed is live: a capture by another process appears in it.
        page(&browser, &format!("{base}/feed"), "Feed").await;
        browser
            .until("the feed's socket", "return document.querySelector('main [role=status]').textContent === 'live'")
            .await;
        // Not empty on open: the recent history comes first (the first capture, made
        // before the server started).
        browser
            .until(
                "the feed's history",
                &format!("return document.querySelector('ul.feed a[href=\"/memories/{first_id}\"]')"),
            )
            .await;
        let second = capture(home, "Grafana dashboards for atlas live in the ops folder.");
        let second_id = second["memory_id"].as_str().unwrap().to_owned();
        // Shown by its content (events carry only ids), linked to its page.
        browser
            .until(
                "the capture in the feed, by its content",
                &format!("return document.querySelector('ul.feed a[href=\"/memories/{second_id}\"]')?.textContent.startsWith('Grafana dashboards')"),
            )
            .await;
        browser.assert_no_console_error("/feed").await;

        // A search shows what ranked each hit.
        page(&browser, &format!("{base}/search?q=deploy%20branch"), "Search").await;
        let why = browser
            .until(
                "a hit with its breakdown",
                "return document.querySelector('td.terms')?.textContent",
            )
            .await;
        let why = why.as_str().unwrap();
        for term in ["cosine", "lexical", "retention", "importance", "H-score"] {
            assert!(why.contains(term), "{term} missing from {why:?}");
        }
        // Ranked by position and relevance (higher is closer), not by a score that reads
        // backwards; the tab names the page.
        let head = browser
            .until("the results' header", "return [...document.querySelectorAll('main th')].map(th => th.textContent).join('|')")
            .await;
        assert_eq!(head, "#|memory|relevance|why");
        assert_eq!(browser.until("the tab's title", "return document.title").await, "Search — levh");

        // Reinforce on the memory's page raises its stability.
        // Its fields in words: the half-life, with the exact hours as the cell's title.
        let stability = "return parseFloat([...document.querySelectorAll('main th')].find(th => th.textContent === 'Half-life')?.nextElementSibling.firstChild.title)";
        page(&browser, &format!("{base}/memories/{first_id}"), MAIN).await;
        let before = browser.until("the stability", stability).await;
        browser.click_button("Reinforce").await;
        browser
            .until(
                "a higher stability",
                &format!("const now = (() => {{ {stability} }})(); return now && Number(now) > Number({before})"),
            )
            .await;
        // Its history, from the event log: stored at a terminal, reinforced here.
        let history = browser
            .until(
                "the reinforcement in the history",
                "const rows = [...document.querySelectorAll('table.history tr')].map(r => [...r.children].slice(1, 3).map(c => c.textContent).join(' ')); return rows.length >= 2 && rows",
            )
            .await;
        assert_eq!(history[0], "reinforce dashboard", "{history}");
        assert_eq!(history[history.as_array().unwrap().len() - 1], "store cli", "{history}");
        // An edit on the page goes through the gate, and the notice says what it decided
        // (the page redraws after an applied edit: a message beside the form once went
        // with it). Importance alone is admitted.
        browser.client.execute("document.querySelector('main details summary').click()", vec![]).await.unwrap();
        let importance = browser.client.find(Locator::Css("main form.edit input[name=importance]")).await.unwrap();
        importance.clear().await.unwrap();
        importance.send_keys("0.8").await.unwrap();
        // The Reinforce's notice dismissed first, as a person would: the next one is the edit's.
        browser.client.find(Locator::Css("#notice button")).await.unwrap().click().await.unwrap();
        browser.click_button("Save through the gate").await;
        let told = browser
            .until("the gate's verdict, kept", "const n = document.getElementById('notice'); return !n.hidden && n.textContent")
            .await;
        assert!(told.as_str().unwrap().starts_with("Saved: the gate admitted the edit."), "{told}");
        // A purge says what is left of the memory: nothing.
        let doomed = capture(home, "The atlas canary runs in the eu-west pool on weekdays.");
        let doomed = doomed["memory_id"].as_str().unwrap().to_owned();
        page(&browser, &format!("{base}/memories/{doomed}"), "The atlas canary runs in the eu-west pool on weekdays.").await;
        browser.click_button("Purge").await;
        browser.client.accept_alert().await.unwrap();
        let told = browser
            .until("the purge's report", "const n = document.getElementById('notice'); return location.pathname === '/memories' && n.textContent.startsWith('Purged') && n.textContent")
            .await;
        assert!(told.as_str().unwrap().starts_with("Purged: no trace of its content is left in the store."), "{told}");
        browser.assert_no_console_error("edit and purge on a memory's page").await;

        // A near-duplicate is held; the person admits it from the queue and it leaves it.
        let held = capture(home, PROD);
        assert_eq!(held["verdict"], "review", "{held}");
        let text = page(&browser, &format!("{base}/held"), "Held for review").await;
        assert!(text.contains(PROD) && text.contains(MAIN), "{text}");
        // Beside the memory it resembles, with the words that change marked.
        let changed = browser
            .until(
                "the word diff",
                "return [...document.querySelectorAll('.diff del, .diff ins')].map(e => e.tagName + ':' + e.textContent).join(' ')",
            )
            .await;
        assert_eq!(changed, "DEL:main. INS:prod.", "{text}");
        browser.screenshot(&shots.join("1280"), "held-candidate").await;
        browser.click_button("Admit").await;
        browser
            .until(
                "the queue without the candidate",
                &format!("return !document.querySelector('main').textContent.includes({PROD:?}) && document.querySelector('main .empty')"),
            )
            .await;
        let store = rusqlite::Connection::open(home.join("levh.db")).unwrap();
        let surface: String = store
            .query_row(
                "SELECT surface FROM events WHERE kind = 'admit' ORDER BY seq DESC LIMIT 1",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(surface, "dashboard");

        // Connectors: the person grants a directory on the page, syncs it with the form
        // the connector's settings make, sees each item's outcome, and revokes the grant.
        let notes = tempfile::tempdir().unwrap();
        std::fs::write(notes.path().join("rotation.txt"), "The atlas on-call rotation changes every Monday at nine.").unwrap();
        std::fs::write(notes.path().join("again.txt"), MAIN).unwrap();
        let directory = notes.path().canonicalize().unwrap().display().to_string();
        page(&browser, &format!("{base}/connectors"), "Connectors").await;
        let card = "section[aria-label=local_files]";
        // The first listing loads every connector component; on a cold machine that
        // compiles them, which takes a while on two busy cores.
        browser
            .until_within(
                "local_files's grants",
                &format!("return document.querySelector('{card} .empty')?.textContent === 'Nothing granted yet.'"),
                std::time::Duration::from_secs(180),
            )
            .await;
        let field = browser.client.find(Locator::Css(&format!("{card} input[name=directory]"))).await.unwrap();
        field.send_keys(&directory).await.unwrap();
        browser.client.find(Locator::Css(&format!("{card} form.search button"))).await.unwrap().click().await.unwrap();
        browser
            .until("the granted directory", &format!("return document.querySelector('{card} ul.grants')?.textContent.includes({directory:?})"))
            .await;
        browser.client.find(Locator::Css(&format!("{card} details summary"))).await.unwrap().click().await.unwrap();
        let setting = browser.client.find(Locator::Css(&format!("{card} form.sync input[name=directory]"))).await.unwrap();
        setting.send_keys(&directory).await.unwrap();
        browser.client.find(Locator::Css(&format!("{card} form.sync button"))).await.unwrap().click().await.unwrap();
        let outcome = browser
            .until_within("the sync's report", &format!("const r = document.querySelector('{card} .report'); return r?.querySelector('table.outcomes') && r.textContent"), std::time::Duration::from_secs(60))
            .await;
        let outcome = outcome.as_str().unwrap();
        assert!(outcome.contains("1 admitted") && outcome.contains("1 held"), "{outcome}");
        assert!(outcome.contains("again.txt"), "the held item is named: {outcome}");
        browser.screenshot(&shots.join("1280"), "connectors-sync").await;
        browser
            .client
            .execute(&format!("document.querySelector('{card} ul.grants button').click()"), vec![])
            .await
            .unwrap();
        browser
            .until("the grant revoked", &format!("return document.querySelector('{card} .empty')?.textContent === 'Nothing granted yet.'"))
            .await;
        let grants = crate::support::json(crate::support::levh(home).args(["connector", "inspect", "local_files", "--json"]));
        assert_eq!(grants["grants"]["read_paths"], serde_json::json!([]), "{grants}");
        browser.assert_no_console_error("/connectors").await;

        // Decisions: what a memory says was decided and promised, read from its text.
        capture(home, "Atlas sync: we decided to freeze the public API until May. I'll write the migration guide by Friday.");
        let text = page(&browser, &format!("{base}/decisions"), "Decisions").await;
        assert!(text.contains("we decided to freeze the public API until May."), "{text}");
        assert!(text.contains("open promises are on Commitments"), "{text}");
        browser.assert_no_console_error("/decisions").await;
        // The promise is on Commitments, by whom (you: nobody else is named), with a heading
        // per column; Done takes it off the open list, says so where it stays readable,
        // and the CLI agrees.
        page(&browser, &format!("{base}/commitments"), "Commitments").await;
        let row = browser
            .until("the promise, by whom", "return [...document.querySelectorAll('table.commitments tbody tr')].find(r => r.textContent.includes('migration guide'))?.children[2].textContent")
            .await;
        assert_eq!(row, "you");
        let head = browser
            .until("the columns", "return [...document.querySelectorAll('table.commitments th')].map(th => th.textContent).join('|')")
            .await;
        assert_eq!(head, "due|promise|by|project|written|action");
        // Any earlier notice dismissed first: the next one is the Done's.
        browser
            .client
            .execute("document.getElementById('notice').hidden = true", vec![])
            .await
            .unwrap();
        browser
            .client
            .execute(
                "[...document.querySelectorAll('table.commitments tr')].find(r => r.textContent.includes('migration guide')).querySelector('button').click()",
                vec![],
            )
            .await
            .unwrap();
        browser
            .until("the kept promise gone", "return !document.querySelector('main').textContent.includes('migration guide')")
            .await;
        let notice = browser
            .until("the notice that stays", "const n = document.getElementById('notice'); return !n.hidden && n.textContent")
            .await;
        assert!(notice.as_str().unwrap().starts_with("Marked done: “I'll write the migration guide"), "{notice}");
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        assert_eq!(browser.until("the notice, still there", "return !document.getElementById('notice').hidden").await, true);
        browser.assert_no_console_error("/commitments").await;
        let open = crate::support::json(crate::support::levh(home).args(["commitments", "--json"]));
        assert!(!open.to_string().contains("migration guide"), "{open}");

        // People, organizations, the timeline and the graph, from a synced mailbox.
        let mbox = crate::support::repository_root().join("fixtures/knowledge/world/mail/deniz.mbox");
        crate::support::ok(crate::support::levh(home).args([
            "sync",
            "email",
            "-c",
            &format!("mbox_path={}", mbox.display()),
        ]));
        let text = page(&browser, &format!("{base}/people"), "People").await;
        assert!(text.contains("Priya Raman") && text.contains("acme-robotics.com"), "{text}");
        browser
            .client
            .execute("[...document.querySelectorAll('table.people a')].find(a => a.textContent === 'Priya Raman').click()", vec![])
            .await
            .unwrap();
        let text = browser
            .until("Priya's page", "const h = document.querySelector('main h1'); return h?.textContent === 'Priya Raman' && document.querySelector('main').innerText")
            .await;
        let text = text.as_str().unwrap();
        for wanted in ["priya.raman@acme-robotics.com", "acme-robotics.com", "Tomás Ortega", "Appears with", "Gripper firmware"] {
            assert!(text.contains(wanted), "{wanted} missing from Priya's page:\n{text}");
        }
        let current = browser
            .client
            .execute("return document.querySelector('nav a[aria-current=page]')?.textContent", vec![])
            .await
            .unwrap();
        assert_eq!(current, "People", "a person's page is under People");
        let person_path = browser.client.current_url().await.unwrap().path().to_owned();
        browser.assert_no_console_error(&person_path).await;
        let text = page(&browser, &format!("{base}/organizations"), "Organizations").await;
        assert!(text.contains("acme-robotics.com") && text.contains("northwind.io"), "{text}");
        let table = browser.text("main table").await;
        assert!(!table.contains("gmail.com") && !table.contains("outlook.com"), "{table}");
        let text = page(&browser, &format!("{base}/timeline?from=2026-10-20&to=2026-10-30"), "Timeline").await;
        let text = browser
            .until("the timeline's days", "const t = document.querySelector('main').innerText; return t.includes('Tuesday 2026-10-20') && t")
            .await
            .as_str()
            .map(str::to_owned)
            .unwrap_or(text);
        assert!(text.contains("Gripper firmware: release date and budget") && text.contains("Climbing on Friday?"), "{text}");
        page(&browser, &format!("{base}/graph"), "Graph").await;
        let circles = browser
            .until("the graph drawn", "const n = document.querySelectorAll('svg.graph circle').length; return n >= 5 && n")
            .await;
        assert!(circles.as_u64().unwrap() >= 5);
        browser.assert_no_console_error("/graph").await;
        // The graph says which colour is which kind.
        let legend = browser.until("the legend", "return [...document.querySelectorAll('ul.legend li')].map(li => li.textContent.trim()).join('|')").await;
        assert!(legend.as_str().unwrap().contains("person") && legend.as_str().unwrap().contains("organization"), "{legend}");

        // Each defect seen in the browser, checked where it was seen.
        // Mail is listed by its subject, never by its headers.
        page(&browser, &format!("{base}/memories?source=connector%3Aemail"), "Memories").await;
        let titles = browser
            .until("the mail listed", "const t = [...document.querySelectorAll('main tbody td:nth-child(2) a')].map(a => a.textContent); return t.length > 3 && t")
            .await;
        let titles: Vec<&str> = titles.as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        assert!(titles.contains(&"Climbing on Friday?") && titles.iter().all(|t| !t.starts_with("From:")), "{titles:?}");
        // A synced mail's page: its fields and metadata in words, the file it was read from
        // as named (not the sandbox's path), who it involves, no literal null.
        browser
            .client
            .execute("[...document.querySelectorAll('main tbody a')].find(a => a.textContent === 'Climbing on Friday?').click()", vec![])
            .await
            .unwrap();
        let text = browser
            .until("the mail's page", "return document.querySelector('main h1')?.textContent === 'Climbing on Friday?' && document.querySelector('ul.involved') && document.querySelector('main').innerText")
            .await;
        let text = text.as_str().unwrap();
        for wanted in ["Half-life", "Written by", "Read from", "deniz.mbox", "Lena Fischer <lena.fischer@outlook.com> (sender)", "Involves"] {
            assert!(text.contains(wanted), "{wanted} missing from the mail's page:\n{text}");
        }
        for unwanted in ["/grant/", "stability_hours", "content_hash", "null", "store · cli"] {
            assert!(!text.contains(unwanted), "{unwanted} on the mail's page:\n{text}");
        }
        // Organization and project pages print no literal null.
        let organization = page(&browser, &format!("{base}/entities/acme-robotics.com"), "acme-robotics.com").await;
        assert!(!organization.contains("null") && organization.contains("People"), "{organization}");
        // Search offers the projects, kinds and sources that exist; Home's groups are links.
        page(&browser, &format!("{base}/search"), "Search").await;
        let kinds = browser.until("the kinds offered", "return [...document.querySelectorAll('select[name=kind] option')].map(o => o.value).join('|')").await;
        assert!(kinds.as_str().unwrap().contains("|email"), "{kinds}");
        page(&browser, &base, "Home").await;
        let linked = browser.until("Home's groups as links", "return [...document.querySelectorAll('main .card a')].map(a => a.getAttribute('href')).filter(h => h.startsWith('/memories?'))").await;
        assert!(linked.as_array().unwrap().iter().any(|h| h == "/memories?source=connector%3Aemail"), "{linked}");
        // The timeline offers what is coming; a person's coming event is not their "last".
        page(&browser, &format!("{base}/timeline"), "Timeline").await;
        let ranges = browser.until("the ranges", "return [...document.querySelectorAll('select[name=range] option')].map(o => o.value).join('|')").await;
        assert!(ranges.as_str().unwrap().contains("next week") && ranges.as_str().unwrap().contains("tomorrow"), "{ranges}");

        // Every page, at both widths: no console error, no sideways scroll, a screenshot.
        let pages = [
            ("home", "/".to_owned(), "Home"),
            ("feed", "/feed".to_owned(), "Feed"),
            ("search", "/search?q=deploy%20branch".to_owned(), "Search"),
            ("memory", format!("/memories/{first_id}"), MAIN),
            ("fading", "/fading".to_owned(), "Fading"),
            ("held", "/held".to_owned(), "Held for review"),
            ("decisions", "/decisions".to_owned(), "Decisions"),
            ("commitments", "/commitments".to_owned(), "Commitments"),
            ("memories", "/memories".to_owned(), "Memories"),
            ("people", "/people".to_owned(), "People"),
            ("person", person_path.clone(), "Priya Raman"),
            ("organizations", "/organizations".to_owned(), "Organizations"),
            ("timeline", "/timeline?from=2026-10-20&to=2026-10-30".to_owned(), "Timeline"),
            ("graph", "/graph".to_owned(), "Graph"),
            ("projects", "/projects".to_owned(), "Projects"),
            ("sessions", "/sessions".to_owned(), "Sessions"),
            ("agents", "/agents".to_owned(), "Agents"),
            ("work", "/work".to_owned(), "Goals, checkpoints and mistakes"),
            ("review", "/review".to_owned(), "Review"),
            ("ask", "/ask".to_owned(), "Ask"),
            ("briefing", "/briefing".to_owned(), "Briefing for"),
            ("meeting-prep", "/meeting-prep".to_owned(), "Meeting prep"),
            ("conflicts", "/conflicts".to_owned(), "Conflicts"),
            ("connectors", "/connectors".to_owned(), "Connectors"),
            ("settings", "/settings".to_owned(), "Settings"),
        ];
        // And axe-core finds no accessibility violation on any of them, light or dark.
        let mut violations = Vec::new();
        for width in [1280, 390] {
            browser.client.set_window_size(width, 900).await.unwrap();
            for (name, path, title) in &pages {
                page_starting(&browser, &format!("{base}{path}"), title).await;
                // Let charts and tables settle before the picture.
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                browser.assert_no_console_error(path).await;
                if width == 1280 {
                    accessibility(&browser, path, "light", &mut violations).await;
                }
                let overflow = browser
                    .client
                    .execute(
                        "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
                        vec![],
                    )
                    .await
                    .unwrap();
                assert!(
                    overflow.as_f64().unwrap() <= 0.0,
                    "{path} at {width} px scrolls sideways by {overflow} px"
                );
                browser
                    .screenshot(&shots.join(width.to_string()), name)
                    .await;
            }
        }
        browser.client.set_window_size(1280, 900).await.unwrap();

        // Dark, as a system set to dark shows it: every page again, on a dark background.
        browser.prefer_dark(true).await;
        for (name, path, title) in &pages {
            page_starting(&browser, &format!("{base}{path}"), title).await;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            accessibility(&browser, path, "dark", &mut violations).await;
            let background = browser
                .client
                .execute("return getComputedStyle(document.body).backgroundColor", vec![])
                .await
                .unwrap();
            assert_eq!(background, "rgb(21, 23, 26)", "{path} in dark mode");
            browser.assert_no_console_error(path).await;
            browser.screenshot(&shots.join("dark"), name).await;
        }
        browser.prefer_dark(false).await;
        assert!(violations.is_empty(), "accessibility violations:\n{}", violations.join("\n"));

        // Settings: what doctor checks, a configuration per MCP client, and the tokens —
        // issued here (the secret shown once), revoked here.
        let text = page(&browser, &format!("{base}/settings"), "Settings").await;
        // A client spawning levh from these configurations embeds as this server does.
        let carried = browser
            .until("the embedder in the MCP configurations", "return [...document.querySelectorAll('main details pre')].filter(p => p.textContent.includes('\"LEVH_EMBEDDER\": \"hash\"')).length")
            .await;
        assert_eq!(carried, 12, "both configurations of every client carry the embedder");
        // Each client's second form starts the wheel from PyPI through the package runner.
        let runners = browser
            .until("the runner's form per client", "return [...document.querySelectorAll('main details pre')].filter(p => p.textContent.includes('\"command\": \"uvx\"') && p.textContent.includes('\"levh-rs\"')).length")
            .await;
        assert_eq!(runners, 6, "every client has the uvx levh-rs form");
        for wanted in ["journal", "wal", "Embedder", "hash-v1", "built-in H-score", "claude_code", "vscode", "/mcp"] {
            assert!(text.contains(wanted), "{wanted} missing from Settings:\n{text}");
        }
        let issue = |role: &'static str, label: &'static str| {
            let browser = &browser;
            async move {
                browser
                    .client
                    .find(Locator::Css("main select[name=role]"))
                    .await
                    .unwrap()
                    .select_by_value(role)
                    .await
                    .unwrap();
                let input = browser.client.find(Locator::Css("main input[name=label]")).await.unwrap();
                input.send_keys(label).await.unwrap();
                browser.click_button("Create token").await;
                let secret = browser
                    .until(
                        "the new token's secret",
                        &format!("const box = document.querySelector('main [role=status] .card'); return box && box.textContent.includes('({role})') && box.querySelector('pre').textContent"),
                    )
                    .await;
                browser
                    .until(
                        "the new token in the list",
                        &format!("return [...document.querySelectorAll('table.tokens td')].some(td => td.textContent === {label:?})"),
                    )
                    .await;
                secret.as_str().unwrap().to_owned()
            }
        };
        let secret = issue("viewer", "browser").await;
        let doomed = issue("editor", "revoke me").await;
        assert!(secret.starts_with("levh_") && doomed.starts_with("levh_") && secret != doomed);
        let health = |token: &str| {
            agent()
                .get(&format!("{base}/api/health"))
                .header("Authorization", &format!("Bearer {token}"))
                .call()
                .unwrap()
                .status()
                .as_u16()
        };
        assert_eq!(health(&doomed), 200);
        browser
            .client
            .execute(
                "[...document.querySelectorAll('table.tokens tr')].find(r => r.textContent.includes('revoke me')).querySelector('button').click()",
                vec![],
            )
            .await
            .unwrap();
        browser.client.accept_alert().await.unwrap();
        browser
            .until(
                "the revoked token marked so",
                "return [...document.querySelectorAll('table.tokens tr')].find(r => r.textContent.includes('revoke me'))?.textContent.includes('revoked')",
            )
            .await;
        assert_eq!(health(&doomed), 401, "a token revoked on the page is refused at once");
        browser.assert_no_console_error("/settings tokens").await;

        // A viewer token (the one issued on the page) sees what there is and no button
        // that would change it.
        assert_eq!(health(&secret), 200);
        let secret = secret.as_str();
        browser
            .client
            .execute(
                "sessionStorage.setItem('levh-token', arguments[0])",
                vec![serde_json::Value::from(secret)],
            )
            .await
            .unwrap();
        for (path, title) in [
            (format!("/memories/{first_id}"), MAIN),
            ("/fading".to_owned(), "Fading"),
            (format!("/memories/{second_id}"), "Grafana dashboards for atlas live in the ops folder."),
        ] {
            let text = page(&browser, &format!("{base}{path}"), title).await;
            // Buttons a person can see (a hidden "More" of a short list is none).
            let buttons = browser
                .client
                .execute("return [...document.querySelectorAll('main button')].filter(b => b.offsetParent).map(b => b.textContent)", vec![])
                .await
                .unwrap();
            assert_eq!(buttons, serde_json::json!([]), "{path}: a viewer sees buttons\n{text}");
        }
        browser.assert_no_console_error("viewer pages").await;
        browser.close().await;
    });
    server.kill().unwrap();
    server.wait().unwrap();
}

/// On a terminal, `levh serve` prints the dashboard's address and opens it in the browser
/// when Enter is pressed (`$BROWSER` here: a script that writes down what it was asked to
/// open). The terminal is a real pseudo-terminal, from util-linux's `script`.
#[test]
fn serve_on_a_terminal_offers_to_open_the_dashboard_and_opens_it_on_enter() {
    use std::io::{BufRead, Write};
    if !std::path::Path::new("/usr/bin/script").is_file() {
        crate::support::skip("no /usr/bin/script (util-linux) for a pseudo-terminal");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let opened = home.path().join("opened");
    let browser = home.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let levh = crate::support::levh_binary();
    let mut command = std::process::Command::new("/usr/bin/script");
    command
        .args([
            "-qfec",
            &format!("'{}' serve --port 0", levh.display()),
            "/dev/null",
        ])
        .env("LEVH_HOME", home.path())
        .env("BROWSER", &browser)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    for (key, _) in std::env::vars() {
        if key.starts_with("LEVH_") && key != "LEVH_HOME" {
            command.env_remove(key);
        }
    }
    let mut terminal = command.spawn().unwrap();
    // Read on a thread, so that a missing line fails the test instead of hanging it.
    let (sender, lines) = std::sync::mpsc::channel();
    let stdout = terminal.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = sender.send(line);
        }
    });
    let next = || {
        lines
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("levh serve on a terminal printed no further line")
    };
    let listening = next();
    let offer = next();
    let address = listening
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_owned();
    let url = format!("http://{address}/");
    assert!(
        offer.contains(&url) && offer.contains("press Enter"),
        "{offer}"
    );
    assert!(!opened.exists(), "nothing opens before Enter");
    terminal.stdin.as_mut().unwrap().write_all(b"\n").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !opened.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let asked = std::fs::read_to_string(&opened).unwrap_or_default();
    let _ = terminal.kill();
    let _ = terminal.wait();
    assert_eq!(asked.trim(), url);

    // Without a terminal (a pipe, as a service manager runs it) there is no offer.
    let mut server = crate::support::levh(home.path())
        .args(["serve", "--port", "0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut output = std::io::BufReader::new(server.stdout.take().unwrap());
    let mut first = String::new();
    output.read_line(&mut first).unwrap();
    assert!(first.contains("listening on http://"), "{first}");
    let _ = server.kill();
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut output, &mut rest);
    let _ = server.wait();
    assert!(!rest.contains("press Enter"), "{rest}");
}

/// The Fading page with something fading (memories captured eleven months ago, through
/// `LEVH_NOW`): a viewer sees the row and no button; on the Review page the person keeps
/// one with the `k` key and snoozes the other with its button, each decision landing in
/// the memory's history (shown on its page) as the dashboard's review.
#[test]
fn in_a_real_browser_a_fading_memory_is_kept_and_a_viewer_sees_it_without_buttons() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let old = crate::support::json(
        crate::support::levh(home)
            .env("LEVH_NOW", "2026-01-05T09:00:00Z")
            .args([
                "capture",
                "The atlas staging database lives on db-stage-2.",
                "--json",
            ]),
    );
    let id = old["memory_id"].as_str().unwrap().to_owned();
    let other = crate::support::json(
        crate::support::levh(home)
            .env("LEVH_NOW", "2026-01-05T09:00:00Z")
            .args([
                "capture",
                "Release notes are written in the pull request description.",
                "--json",
            ]),
    );
    let other = other["memory_id"].as_str().unwrap().to_owned();
    // A pair that may disagree, found when the second is stored.
    capture(home, "Billing is owned by Priya.");
    let rival = capture(home, "Billing is owned by Kenji, who also handles refunds.");
    assert_eq!(rival["conflicts"].as_array().unwrap().len(), 1, "{rival}");
    let viewer = crate::support::json(
        crate::support::levh(home).args(["token", "create", "--role", "viewer", "--json"]),
    );
    let (mut server, address) = serve(home, &[]);
    let base = format!("http://{address}");
    crate::support::runtime().block_on(async {
        let Some(browser) = Browser::start(1280).await else {
            return;
        };
        browser.client.goto(&base).await.unwrap();
        browser
            .client
            .execute("sessionStorage.setItem('levh-token', arguments[0])", vec![viewer["secret"].clone()])
            .await
            .unwrap();
        let row = format!("return [...document.querySelectorAll('main tr')].find(r => r.querySelector('a[href=\"/memories/{id}\"]'))");
        page(&browser, &format!("{base}/fading"), "Fading").await;
        browser.until("the fading row", &row).await;
        let buttons = browser.client.find_all(Locator::Css("main button")).await.unwrap();
        assert!(buttons.is_empty(), "a viewer sees {} buttons on Fading", buttons.len());

        // The local person (no token) reviews both: `k` keeps the one shown, the other
        // is snoozed with its button; then nothing is due.
        browser.client.execute("sessionStorage.removeItem('levh-token')", vec![]).await.unwrap();
        page(&browser, &format!("{base}/review"), "Review").await;
        let shown = "const a = document.querySelector('main .review .content a'); return a && a.getAttribute('href')";
        let first = browser.until("a memory to review", shown).await;
        browser.client.execute("document.activeElement.blur()", vec![]).await.unwrap();
        browser.type_char('k').await;
        browser
            .until("the next memory", &format!("const a = document.querySelector('main .review .content a'); return a && a.getAttribute('href') !== {first}"))
            .await;
        browser.click_button("Snooze (s)").await;
        browser
            .until("nothing left", "return document.querySelector('main').textContent.includes('Done: 2 reviewed')")
            .await;
        assert!(browser.text("main [role=status]").await.starts_with("snooze: next review"));
        browser.client.goto(&format!("{base}/memories/{id}")).await.unwrap();
        browser
            .until("the review in its history", "return [...document.querySelectorAll('main table.history strong')].some(s => s.textContent === 'review')")
            .await;
        browser.assert_no_console_error("/review, a memory's history").await;

        // Conflicts: the pair, resolved from the page (the newer kept).
        page(&browser, &format!("{base}/conflicts"), "Conflicts").await;
        browser
            .until("the pair", "return document.querySelectorAll('main .card').length === 1")
            .await;
        browser.click_button("Keep the newer").await;
        browser
            .until(
                "no open conflict",
                "return document.querySelector('main').textContent.includes('No open conflict.')",
            )
            .await;
        // Ask: an answer that cites the memory it used.
        page(&browser, &format!("{base}/ask?q=who%20owns%20billing"), "Ask").await;
        browser
            .until(
                "a citation of Kenji's memory",
                "return [...document.querySelectorAll('main li a')].some(a => a.textContent.includes('Kenji'))",
            )
            .await;
        // The briefing and meeting prep draw without an event; a memory shows its trust.
        browser.client.goto(&format!("{base}/briefing")).await.unwrap();
        browser
            .until("the briefing", "const h = document.querySelector('main h1'); return h && h.textContent.startsWith('Briefing for ')")
            .await;
        page(&browser, &format!("{base}/meeting-prep"), "Meeting prep").await;
        browser.client.goto(&format!("{base}/memories/{}", rival["memory_id"].as_str().unwrap())).await.unwrap();
        browser
            .until("the trust breakdown", "return [...document.querySelectorAll('main h2')].some(h => h.textContent === 'Trust') && !!document.querySelector('main .trust table')")
            .await;
        browser.assert_no_console_error("/conflicts, /ask, /briefing, /meeting-prep, a memory").await;
        browser.close().await;
    });
    let store = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    let mut decisions: Vec<String> = [&id, &other]
        .iter()
        .map(|memory| {
            let (kind, surface, detail): (String, String, String) = store
                .query_row(
                    "SELECT kind, surface, detail FROM events WHERE memory_id = ?1 ORDER BY seq DESC LIMIT 1",
                    [memory],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .unwrap();
            assert_eq!((kind.as_str(), surface.as_str()), ("review", "dashboard"));
            let detail: serde_json::Value = serde_json::from_str(&detail).unwrap();
            detail["decision"].as_str().unwrap().to_owned()
        })
        .collect();
    decisions.sort();
    assert_eq!(decisions, ["keep", "snooze"]);
    server.kill().unwrap();
    server.wait().unwrap();
}

/// `n` memories written straight into the store file, in ten projects and four kinds,
/// with importance spread over 0..1 and every tenth stored a year ago (fading now). The
/// gate's cost is not what the list test measures: a debug build admits 10k one by one in
/// two minutes. Returns the ids, in the order written.
fn seed_memories(home: &std::path::Path, n: usize) -> Vec<levh_core::MemoryId> {
    use levh_core::{
        AdmissionRecord, AdmissionVerdict, BatchWrite, Kind, Memory, MemoryId, MemoryState,
        NewMemoryRecord, Store, Workspace, text,
    };
    let store = levh_store::SqliteStore::open(&home.join("levh.db")).unwrap();
    let now = jiff::Timestamp::now();
    let words = [
        "amber", "birch", "cedar", "dune", "ember", "fjord", "glade", "harbor", "islet", "jasper",
        "kelp", "lagoon",
    ];
    let kinds = ["note", "decision", "fact", "event"];
    let writes: Vec<BatchWrite> = (0..n)
        .map(|i| {
            // Spread over the past (a year ago for every tenth), a microsecond apart so
            // that the newest-first order is the reverse of writing.
            let age = if i % 10 == 0 {
                365 * 24 * 3600
            } else {
                (n - i) as i64
            };
            let at = now - jiff::SignedDuration::from_secs(age)
                + jiff::SignedDuration::from_micros(i as i64);
            let content = format!(
                "Item {i}: the {} {} report for project {} lists ticket {}.",
                words[i % 12],
                words[(i / 12) % 12],
                i % 10,
                1000 + i
            );
            BatchWrite::Memory {
                record: NewMemoryRecord {
                    memory: Memory {
                        id: MemoryId::new_at(at),
                        workspace: Workspace::new("default").unwrap(),
                        project: Some(format!("project-{}", i % 10)),
                        content_hash: text::content_hash(&content),
                        content,
                        kind: Kind::new(kinds[i % 4]).unwrap(),
                        source: "seed".into(),
                        state: MemoryState {
                            importance: (i % 101) as f64 / 100.0,
                            pinned: false,
                            stability_hours: 168.0,
                            last_recalled_at: None,
                            recall_count: 0,
                            created_at: at,
                        },
                        valid_from: at,
                        valid_to: None,
                        superseded_by: None,
                        admission: AdmissionRecord {
                            verdict: AdmissionVerdict::Admit,
                            reasons: vec![],
                            decided_by: "gate".into(),
                        },
                        metadata: serde_json::json!({}),
                        session_id: None,
                        embedding_model: None,
                        embedding_dimension: None,
                    },
                    embedding: None,
                    near_duplicate_keys: vec![],
                    working: false,
                    forgotten_at: None,
                },
                neighbours: vec![],
                identical_seen: vec![],
            }
        })
        .collect();
    let ids = writes
        .iter()
        .map(|w| match w {
            BatchWrite::Memory { record, .. } => record.memory.id,
            BatchWrite::Held { .. } => unreachable!(),
        })
        .collect();
    for chunk in writes.chunks(1000) {
        store
            .write_batch(chunk, None, &|_| None, &levh_core::Actor::cli())
            .unwrap();
    }
    ids
}

/// The Memories page on a store of 10,000, in a real Chromium: the first page and a
/// filter change each timed in the page (User Timing marks, reported here and in the
/// screenshots' folder); sorting by importance and paging by keyset with no row twice;
/// filters offered from the values that exist, with the count that matches (fading,
/// a date range, who a memory is about); a selection pinned, moved to another project,
/// exported and forgotten from the keyboard and mouse, each said in a notice that stays.
#[test]
fn in_a_real_browser_ten_thousand_memories_are_listed_filtered_paged_and_acted_on() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    seed_memories(home, 10_000);
    // One memory about a person, through the gate (the entity index is the gate's).
    let grace = capture(
        home,
        "Lunch with grace@example.org about the harbor lease renewal.",
    );
    let grace = grace["memory_id"].as_str().unwrap().to_owned();
    let (mut server, address) = serve(home, &[]);
    let base = format!("http://{address}");
    let shots = screenshots();
    let measured = crate::support::runtime().block_on(async {
        let browser = Browser::start(1280).await?;
        let shown = |n: &str| format!("return document.getElementById('memories-count')?.textContent === {n:?}");
        // The first page: from the navigation to the rows and their count on screen.
        page(&browser, &format!("{base}/memories"), "Memories").await;
        browser.until("the first page and its count", &shown("50 of 10001 shown")).await;
        let first = browser
            .until("the first page's time", "return performance.getEntriesByName('levh:memories-shown')[0]?.startTime")
            .await
            .as_f64()
            .unwrap();
        // Where the first page's time goes: each request of the page, by its own timing.
        let requests = browser
            .client
            .execute("return performance.getEntriesByType('resource').filter(r => r.name.includes('/api/') || r.name.includes('/assets/')).map(r => [new URL(r.name).pathname + new URL(r.name).search, Math.round(r.startTime), Math.round(r.duration)])", vec![])
            .await
            .unwrap();
        eprintln!("first page's requests [path, start ms, duration ms]: {requests}");
        let newest = browser.until("the newest row", "return document.querySelector('main tbody tr td:nth-child(2)')?.textContent").await;
        assert!(newest.as_str().unwrap().starts_with("Lunch with grace"), "newest first: {newest}");
        // A filter change: a project chosen from the values that exist (with counts).
        let offered = browser
            .until("the projects offered", "return [...document.querySelectorAll('select[name=project] option')].map(o => o.textContent).join('|')")
            .await;
        assert!(offered.as_str().unwrap().contains("project-3 (1000)"), "{offered}");
        browser.client.execute("performance.clearMeasures()", vec![]).await.unwrap();
        browser.client.find(Locator::Css("select[name=project]")).await.unwrap().select_by_value("project-3").await.unwrap();
        browser.until("a project's memories", &shown("50 of 1000 shown")).await;
        let filtered = browser
            .until("the filter change's time", "return performance.getEntriesByName('levh:memories-list')[0]?.duration")
            .await
            .as_f64()
            .unwrap();
        assert_eq!(browser.client.current_url().await.unwrap().query(), Some("project=project-3"), "the filter is in the address");
        // By importance, paged twice by keyset: 150 rows, none twice, never rising.
        browser.client.find(Locator::Css("select[name=sort]")).await.unwrap().select_by_value("importance").await.unwrap();
        browser.until("sorted by importance", "return location.search.includes('sort=importance') && document.querySelectorAll('main tbody tr').length === 50").await;
        for rows in [100, 150] {
            browser.click_button("More").await;
            browser.until("the next page", &format!("return document.querySelectorAll('main tbody tr').length === {rows}")).await;
        }
        let order = browser
            .until("the rows' importance", "return [...document.querySelectorAll('main tbody tr')].map(r => [r.querySelector('input').value, Number(r.children[5].textContent)])")
            .await;
        let order = order.as_array().unwrap();
        let ids: std::collections::HashSet<&str> = order.iter().map(|r| r[0].as_str().unwrap()).collect();
        assert_eq!(ids.len(), 150, "a row shown twice across pages");
        assert!(order.windows(2).all(|w| w[0][1].as_f64() >= w[1][1].as_f64()), "{order:?}");
        assert_eq!(order[0][1], 1.0, "the most important first");
        // Fading: the year-old tenth, weakest first, counted.
        browser.client.goto(&format!("{base}/memories?show=fading&sort=retention")).await.unwrap();
        browser.until("the fading memories", &shown("50 of 1000 shown")).await;
        // A date range (the person's days) and who a memory is about.
        let today = browser.until("today, as the browser says it", "const d = new Date(); return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`").await;
        let today = today.as_str().unwrap();
        browser.client.goto(&format!("{base}/memories?about=grace%40example.org&from={today}&to={today}")).await.unwrap();
        browser.until("the memory about Grace", &shown("1 memory")).await;
        assert!(browser.text("main tbody").await.contains("harbor lease"));
        browser.screenshot(&shots.join("1280"), "memories-filtered").await;
        browser.assert_no_console_error("/memories filters").await;

        // A selection of three, by their checkboxes: pinned; then two of them moved; the
        // two exported; one forgotten. Each says what it did and stays said.
        page(&browser, &format!("{base}/memories?project=project-7"), "Memories").await;
        browser.until("project-7's memories", &shown("50 of 1000 shown")).await;
        let pick = |n: usize| format!("const boxes = document.querySelectorAll('main tbody input[type=checkbox]'); for (let i = 0; i < {n}; i++) boxes[i].click(); return document.querySelector('.selection [role=status]').textContent");
        let picked = browser.client.execute(&pick(3), vec![]).await.unwrap();
        assert_eq!(picked, "3 selected");
        let chosen = browser
            .client
            .execute("return [...document.querySelectorAll('main tbody input:checked')].map(b => b.value)", vec![])
            .await
            .unwrap();
        browser.click_button("Pin").await;
        let notice = "const n = document.getElementById('notice'); return !n.hidden && n.textContent";
        assert!(browser.until("the pin said", notice).await.as_str().unwrap().starts_with("Pinned 3."));
        browser.client.find(Locator::Css("select[name=show]")).await.unwrap().select_by_value("pinned").await.unwrap();
        browser.until("the pinned three", &shown("3 memories")).await;
        browser.client.execute(&pick(2), vec![]).await.unwrap();
        browser.client.find(Locator::Css(".selection input[list=memories-projects]")).await.unwrap().send_keys("archive").await.unwrap();
        browser.click_button("Move to project").await;
        browser.until("the move said", &format!("{notice}.startsWith('Moved 2 to archive.')")).await;
        let archived = crate::support::json(crate::support::levh(home).args(["list", "--project", "archive", "--json"]));
        let archived: Vec<&str> = archived["memories"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
        assert_eq!(archived.len(), 2);
        assert!(archived.iter().all(|id| chosen.as_array().unwrap().iter().any(|c| c == id)), "{archived:?} not among {chosen}");
        page(&browser, &format!("{base}/memories?project=archive"), "Memories").await;
        browser.until("the moved two", &shown("2 memories")).await;
        browser.client.execute(&pick(2), vec![]).await.unwrap();
        // The export is what `levh import` reads: one memory a line, as the list has it.
        browser.client.execute("window.__exported = null; const create = URL.createObjectURL; URL.createObjectURL = (blob) => { blob.text().then(t => window.__exported = t); return create(blob); }", vec![]).await.unwrap();
        browser.click_button("Export selection").await;
        let exported = browser.until("the exported lines", "return window.__exported").await;
        let lines: Vec<serde_json::Value> = exported.as_str().unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|m| m["project"] == "archive" && m["pinned"] == true), "{lines:?}");
        browser.client.execute(&format!("{}; document.querySelectorAll('main tbody input')[0].click()", "document.querySelectorAll('main tbody input:checked').forEach(b => b.click())"), vec![]).await.unwrap();
        browser.click_button("Forget").await;
        browser.client.accept_alert().await.unwrap();
        browser.until("the forget said", &format!("{notice}.startsWith('Forgot 1.')")).await;
        browser.until("one left in the project", &shown("1 memory")).await;
        browser.client.find(Locator::Css("select[name=show]")).await.unwrap().select_by_value("forgotten").await.unwrap();
        browser.until("the forgotten one", &shown("1 memory")).await;
        browser.assert_no_console_error("/memories actions").await;
        // At 390 px: no sideways scroll.
        browser.client.set_window_size(390, 844).await.unwrap();
        page(&browser, &format!("{base}/memories"), "Memories").await;
        browser.until("the list at 390 px", &shown("50 of 10000 shown")).await;
        let overflow = browser.client.execute("return document.documentElement.scrollWidth - document.documentElement.clientWidth", vec![]).await.unwrap();
        assert!(overflow.as_f64().unwrap() <= 0.0, "the list scrolls sideways at 390 px by {overflow}");
        browser.screenshot(&shots.join("390"), "memories").await;
        // The memory page in words, with who it involves, and no overflowing title.
        page(&browser, &format!("{base}/memories/{grace}"), "Lunch with grace@example.org about the harbor lease renewal.").await;
        let fields = browser.text("main table.fields").await;
        for raw in ["stability_hours", "content_hash", "null"] {
            assert!(!fields.contains(raw), "{raw} on the memory page:\n{fields}");
        }
        let involved = browser.until("who it involves", "return [...document.querySelectorAll('ul.involved a')].map(a => a.textContent + ' ' + a.getAttribute('href'))").await;
        assert!(involved.as_array().unwrap().iter().any(|a| a.as_str().unwrap().starts_with("grace@example.org /people/")), "{involved}");
        let overflow = browser.client.execute("return document.documentElement.scrollWidth - document.documentElement.clientWidth", vec![]).await.unwrap();
        assert!(overflow.as_f64().unwrap() <= 0.0, "the memory page scrolls sideways at 390 px by {overflow}");
        browser.screenshot(&shots.join("390"), "memory-in-words").await;
        browser.assert_no_console_error("the memory page").await;
        browser.close().await;
        Some((first, filtered))
    });
    server.kill().unwrap();
    server.wait().unwrap();
    if let Some((first, filtered)) = measured {
        // Reported, not judged here: speed is judged by benchmarks beside a baseline, not
        // by a timed test on a shared machine (README: the dashboard's figures).
        let report = format!(
            "{{\"memories\": 10001, \"first_page_ms\": {first:.0}, \"filter_change_ms\": {filtered:.0}}}\n"
        );
        std::fs::create_dir_all(shots.clone()).unwrap();
        std::fs::write(shots.join("memory-list-timing.json"), &report).unwrap();
        eprintln!("memory list at 10k: {report}");
    }
}

/// The live feed across a restart of the server, in a real Chromium: it says it is
/// reconnecting, comes back by itself on the same address, and shows what happened after
/// (the history it is sent again shown once). Then an edit the gate held — a rewrite that
/// now reads like another memory — is compared with the memory it would change and
/// applied from the keyboard alone (Tab to "Apply the edit", Enter).
#[test]
fn in_a_real_browser_the_feed_survives_a_restart_and_a_held_edit_is_applied_by_keyboard() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    capture(home, MAIN);
    let other = capture(home, "Grafana dashboards for atlas live in the ops folder.");
    let other = other["memory_id"].as_str().unwrap().to_owned();
    let (mut server, address) = serve(home, &[]);
    let port = address.rsplit(':').next().unwrap().to_owned();
    let base = format!("http://{address}");
    crate::support::runtime().block_on(async {
        let Some(browser) = Browser::start(1280).await else {
            return;
        };
        page(&browser, &format!("{base}/feed"), "Feed").await;
        let status = "document.querySelector('main [role=status]').textContent";
        browser.until("the feed live", &format!("return {status} === 'live'")).await;
        // Its history labelled (by the memories' content) before the server goes away.
        browser
            .until("the history labelled", "return [...document.querySelectorAll('ul.feed a')].some(a => a.textContent.startsWith('Grafana dashboards'))")
            .await;
        browser.assert_no_console_error("/feed").await;
        server.kill().unwrap();
        server.wait().unwrap();
        browser.until("the feed saying it reconnects", &format!("return ({status}).startsWith('disconnected — reconnecting')")).await;
        // The same address again, as a service manager restarts it.
        let mut command = crate::support::levh(home);
        command.args(["serve", "--port", &port]).stderr(std::process::Stdio::null());
        let (restarted, again) = crate::support::spawn_server(&mut command);
        server = restarted;
        assert_eq!(again, address);
        browser
            .until_within("the feed live again", &format!("return {status} === 'live'"), std::time::Duration::from_secs(30))
            .await;
        // While it was down, the only errors were the refused reconnections.
        let errors = browser.console_errors().await;
        assert!(
            errors.iter().all(|e| e.contains("ERR_CONNECTION_REFUSED") || e.contains("WebSocket")),
            "{errors:#?}"
        );
        let after = capture(home, "The atlas status page moved to status.atlas.example.");
        let after = after["memory_id"].as_str().unwrap().to_owned();
        browser
            .until("what happened after the restart", &format!("return document.querySelector('ul.feed a[href=\"/memories/{after}\"]')"))
            .await;
        let shown = browser
            .client
            .execute(&format!("return document.querySelectorAll('ul.feed a[href=\"/memories/{after}\"]').length"), vec![])
            .await
            .unwrap();
        assert_eq!(shown, 1, "each event once");
        browser.assert_no_console_error("/feed across a restart").await;

        // An edit that now reads like another memory is held, not applied.
        let edited = ureq::patch(&format!("{base}/api/memories/{other}"))
            .header("Content-Type", "application/json")
            .send(serde_json::json!({ "content": PROD }).to_string())
            .unwrap();
        assert_eq!(edited.status().as_u16(), 202);
        let text = page(&browser, &format!("{base}/held"), "Held for review").await;
        assert!(text.contains("Would change") && text.contains("Grafana dashboards"), "{text}");
        // The keyboard alone: Tab until "Apply the edit", then Enter.
        let mut reached = false;
        for _ in 0..60 {
            browser.press(Key::Tab).await;
            if browser.focused().await == "BUTTON \"Apply the edit\"" {
                reached = true;
                break;
            }
        }
        assert!(reached, "no Tab reaches Apply the edit");
        browser.press(Key::Enter).await;
        browser.until("the queue empty", "return document.querySelector('main .empty')").await;
        let shown = crate::support::json(crate::support::levh(home).args(["show", &other, "--json"]));
        assert_eq!(shown["content"], PROD, "{shown}");
        browser.assert_no_console_error("/held by keyboard").await;
        browser.close().await;
    });
    server.kill().unwrap();
    server.wait().unwrap();
}

/// An agent's working loop as a person follows it, in a real Chromium against a real
/// `levh serve`: the Agents page lists an MCP client connected from another process and
/// shows it ended when it closes, without a reload (the live feed); usage by day and the
/// recall report count what was done; the Goals page reaches a milestone, sets a status
/// and adds a progress note; a checkpoint shows what the next session reads; an action
/// is checked against a recorded mistake (and an unrelated one finds none); a mistake is
/// recorded from the form. No console error and no accessibility violation on either.
#[test]
fn in_a_real_browser_an_agents_goals_checkpoints_mistakes_and_presence_are_followed_and_changed() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let levh =
        |args: &[&str]| crate::support::json(crate::support::levh(home).args(args).arg("--json"));
    levh(&[
        "goals",
        "add",
        "Ship atlas 2.0",
        "--project",
        "atlas",
        "--milestone",
        "schema migrated",
        "--milestone",
        "soak test passed",
        "--milestone",
        "released",
    ]);
    levh(&[
        "checkpoint",
        "--project",
        "atlas",
        "--task",
        "atlas 2.0",
        "--goal",
        "Ship atlas 2.0 to production",
        "--done",
        "moved the deploy target to us-east",
        "--next",
        "run the soak test",
        "--question",
        "who signs off?",
    ]);
    let mistake = levh(&[
        "mistakes",
        "add",
        "Ran the database migration on production without taking a backup first",
        "--why",
        "the runbook skipped the backup step",
        "--avoid",
        "snapshot the database before any migration",
        "--project",
        "atlas",
    ]);
    let mistake = mistake["memory_id"].as_str().unwrap().to_owned();
    let recalled = levh(&["recall", "database migration backup"]);
    let first = recalled["results"][0]["id"].as_str().unwrap().to_owned();
    levh(&["feedback", &first, "--helpful"]);
    let (mut server, address) = serve(home, &[]);
    let base = format!("http://{address}");
    crate::support::runtime().block_on(async {
        let Some(browser) = Browser::start(1280).await else {
            return;
        };
        // An agent connects from its own process and works on atlas.
        let (cursor, _process) = crate::mcp::spawn_stdio_with(home, "cursor", &[]).await;
        let called = cursor
            .call_tool(
                levh_mcp::rmcp::model::CallToolRequestParams::new("recall_memory").with_arguments(
                    serde_json::json!({ "query": "soak test", "project": "atlas" }).as_object().unwrap().clone(),
                ),
            )
            .await
            .unwrap();
        assert_ne!(called.is_error, Some(true), "{called:?}");
        // Its process writes the recall's event within a second (events are batched).
        let start = std::time::Instant::now();
        while levh(&["report", "usage", "--client", "cursor"])["totals"]["recalls"] != 1 {
            assert!(start.elapsed() < std::time::Duration::from_secs(10), "the agent's recall never logged");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        page(&browser, &format!("{base}/agents"), "Agents").await;
        let row = "[...document.querySelectorAll('table.presence tbody tr')].find(r => r.textContent.includes('cursor'))";
        browser
            .until("cursor connected, on atlas", &format!("const r = {row}; return r && r.textContent.includes('connected') && r.textContent.includes('atlas')"))
            .await;
        browser.until("the usage table", "return document.querySelector('table.usage tfoot')").await;
        let usage = browser.text("table.usage").await;
        assert!(usage.contains("terminal") && usage.contains("cursor"), "{usage}");
        let summary = browser.text("main h2 ~ div [role=status]").await;
        let report = browser
            .until("the recall report", "return [...document.querySelectorAll('main [role=status]')].map(e => e.textContent).find(t => t.includes('found nothing'))")
            .await;
        let report = report.as_str().unwrap().to_owned();
        assert!(report.starts_with("2 recalls:") && report.contains("1 then used"), "{report} / {summary}");
        assert!(browser.text("main").await.contains("Queries are not kept"));
        let mut violations = Vec::new();
        accessibility(&browser, "/agents with a session", "light", &mut violations).await;
        let shots = screenshots().join("agents-work");
        browser.screenshot(&shots, "agents").await;
        // It closes: the page says so by itself, from the feed's session-end.
        cursor.cancel().await.unwrap();
        browser
            .until_within("cursor ended, without a reload", &format!("const r = {row}; return r && r.textContent.includes('ended')"), std::time::Duration::from_secs(10))
            .await;
        browser.assert_no_console_error("/agents").await;

        // Goals: a milestone reached, a status, a note.
        page(&browser, &format!("{base}/work"), "Goals, checkpoints and mistakes").await;
        let text = browser.text("ul.goals").await;
        assert!(text.contains("Ship atlas 2.0") && text.contains("0 of 3 milestones reached"), "{text}");
        browser.click_button("Reached").await;
        browser
            .until("the milestone reached", "return document.querySelector('ul.goals')?.textContent.includes('1 of 3 milestones reached')")
            .await;
        assert!(browser.text("#notice").await.contains("Milestone reached: schema migrated"));
        browser.client.find(Locator::Css("ul.goals input[name=note]")).await.unwrap()
            .send_keys("The schema migration ran in four minutes").await.unwrap();
        browser.click_button("Add note").await;
        browser
            .until("the note in the log", "return document.querySelector('ul.goals')?.textContent.includes('The schema migration ran in four minutes')")
            .await;
        browser
            .client
            .execute("const s = document.querySelector('ul.goals select[name=status]'); s.value = 'blocked'; s.dispatchEvent(new Event('change'));", vec![])
            .await
            .unwrap();
        browser
            .until("the status changed", "return document.querySelector('#notice')?.textContent.includes('Ship atlas 2.0 is now blocked')")
            .await;
        let goals = levh(&["goals", "list"]);
        assert_eq!(goals["goals"][0]["status"], "blocked", "{goals}");
        assert_eq!(goals["goals"][0]["milestones"][0]["reached"], true, "{goals}");
        assert_eq!(goals["goals"][0]["log"].as_array().unwrap().len(), 1, "{goals}");

        // The checkpoint, and what the next session reads from it.
        let checkpoint = browser.text("ul.checkpoints").await;
        assert!(checkpoint.contains("atlas 2.0") && checkpoint.contains("run the soak test") && checkpoint.contains("who signs off?"), "{checkpoint}");
        browser.click_button("What the next session reads").await;
        let resumed = browser.until("the resume text", "return document.querySelector('pre.resume')?.textContent").await;
        assert!(resumed.as_str().unwrap().contains("Goal: Ship atlas 2.0 to production"), "{resumed}");

        // An action checked against the mistakes: the paraphrase finds it, lunch does not.
        check_action(&browser, "migrate the prod database schema now").await;
        browser
            .until("the mistake applies", &format!("return document.querySelector('main a[href=\"/memories/{mistake}\"]') && document.querySelector('main p.warning')"))
            .await;
        assert!(browser.text("main").await.contains("Avoid it: snapshot the database before any migration"));
        check_action(&browser, "order lunch for the team on Friday").await;
        browser
            .until("no known issue", "return document.querySelector('main p.good')?.textContent === 'no known issue'")
            .await;

        // A mistake recorded from the form joins the table.
        browser.client.execute("document.querySelector('main details').open = true", vec![]).await.unwrap();
        for (name, value) in [("what", "Deleted the staging bucket while cleaning up old test data"),
            ("why", "the bucket names looked alike"), ("avoid", "check the bucket's tags before deleting")] {
            browser.client.find(Locator::Css(&format!("form.record-mistake input[name={name}]"))).await.unwrap()
                .send_keys(value).await.unwrap();
        }
        browser.client.find(Locator::Css("form.record-mistake button")).await.unwrap().click().await.unwrap();
        browser
            .until("the new mistake listed", "return document.querySelector('table.mistakes')?.textContent.includes('Deleted the staging bucket')")
            .await;
        assert!(browser.text("#notice").await.contains("Mistake recorded."));
        let listed = levh(&["mistakes"]);
        assert_eq!(listed["memories"].as_array().unwrap().len(), 2, "{listed}");
        browser.assert_no_console_error("/work").await;
        browser.screenshot(&shots, "work").await;
        accessibility(&browser, "/work with content", "light", &mut violations).await;
        assert!(violations.is_empty(), "{violations:#?}");
        // Read on a phone too: nothing scrolls sideways, what the next session reads wraps.
        let sideways = "return document.documentElement.scrollWidth - document.documentElement.clientWidth";
        let overflow = browser.client.execute(sideways, vec![]).await.unwrap();
        assert!(overflow.as_f64().unwrap() <= 0.0, "/work scrolls sideways by {overflow} px");
        browser.client.set_window_size(390, 900).await.unwrap();
        for (path, title) in [("/work", "Goals, checkpoints and mistakes"), ("/agents", "Agents")] {
            page(&browser, &format!("{base}{path}"), title).await;
            if path == "/work" {
                browser.click_button("What the next session reads").await;
                browser.until("the resume text", "return document.querySelector('pre.resume')").await;
            }
            let overflow = browser.client.execute(sideways, vec![]).await.unwrap();
            let wide = browser.client.execute("return [...document.querySelectorAll('main table, main pre, main form')].filter(e => e.scrollWidth > document.documentElement.clientWidth || e.getBoundingClientRect().right > document.documentElement.clientWidth).map(e => e.className + ' ' + Math.round(e.getBoundingClientRect().right))", vec![]).await.unwrap();
            assert!(overflow.as_f64().unwrap() <= 0.0, "{path} at 390 px scrolls sideways by {overflow} px: {wide}");
            browser.screenshot(&shots, &format!("{}-390", &path[1..])).await;
        }
        browser.close().await;
    });
    server.kill().unwrap();
    server.wait().unwrap();
}

/// Types `action` in the Goals page's "Check an action" field and presses Check.
async fn check_action(browser: &Browser, action: &str) {
    let field = browser
        .client
        .find(Locator::Css("main input[name=action]"))
        .await
        .unwrap();
    field.clear().await.unwrap();
    field.send_keys(action).await.unwrap();
    browser.click_button("Check").await;
}
